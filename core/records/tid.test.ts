import { ensureValidRecordKey, ensureValidTid, isValidTid } from "@atproto/syntax";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isTid, nextTid, tidTime } from "./tid";

const alphabet = "234567abcdefghijklmnopqrstuvwxyz";
const decode = (s: string) => [...s].reduce((n, c) => n * 32 + alphabet.indexOf(c), 0);

describe("nextTid", () => {
  afterEach(() => vi.useRealTimers());

  it("TIDs are 13 characters and valid TIDs and record keys per @atproto/syntax", () => {
    for (let i = 0; i < 100; i++) {
      const tid = nextTid();
      expect(tid).toHaveLength(13);
      expect(() => ensureValidTid(tid)).not.toThrow();
      expect(() => ensureValidRecordKey(tid)).not.toThrow();
    }
  });

  it("TIDs are strictly increasing over 10,000 calls", () => {
    const tids = Array.from({ length: 10_000 }, () => nextTid());
    for (let i = 1; i < tids.length; i++) expect(tids[i]! > tids[i - 1]!).toBe(true);
  });

  // Fresh module state, so one test's clock games do not leak into another.
  const freshNextTid = async () => {
    vi.resetModules();
    return (await import("./tid")).nextTid;
  };

  it("TIDs keep increasing when the clock stands still or steps back", async () => {
    const nextTid = await freshNextTid();
    vi.useFakeTimers({ now: Date.now() + 60_000, toFake: ["Date"] });
    const a = nextTid();
    const b = nextTid();
    vi.setSystemTime(Date.now() - 5_000);
    const c = nextTid();
    expect(b > a && c > b).toBe(true);
  });

  it("a TID minted at a time stands for that time (tidTime, to the millisecond), or just after the last TID when that is later", async () => {
    const nextTid = await freshNextTid();
    const at = Date.parse("2030-01-02T03:04:05.678Z");
    const first = nextTid(at);
    expect(tidTime(first).toISOString()).toBe("2030-01-02T03:04:05.678Z");
    const earlier = nextTid(at - 60_000);
    expect(earlier > first).toBe(true);
    expect(tidTime(earlier).getTime()).toBe(at);
  });

  it("a TID carries the current time in microseconds and a 10-bit clock id", async () => {
    const nextTid = await freshNextTid();
    const before = Date.now() * 1000;
    const tid = nextTid();
    const micros = decode(tid.slice(0, 11));
    expect(micros).toBeGreaterThanOrEqual(before);
    expect(micros).toBeLessThan((Date.now() + 1000) * 1000);
    expect(decode(tid.slice(11))).toBeLessThan(1024);
  });
});

describe("isTid", () => {
  it("isTid accepts TIDs and rejects other record keys", () => {
    expect(isTid(nextTid())).toBe(true);
    expect(isTid("3lbqcfqdbxk2a")).toBe(true);
    for (const bad of ["", "self", "3lbqcfqdbxk2", "3lbqcfqdbxk2aa", "3LBQCFQDBXK2A", "zlbqcfqdbxk2a", "3lbqcfqdbxk21", "../etc/passwd", 42]) {
      expect(isTid(bad)).toBe(false);
      if (typeof bad === "string") expect(isValidTid(bad)).toBe(false);
    }
  });
});
