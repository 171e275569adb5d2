import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DomainError } from "../domain-error";
import { errorStatus } from "../http/errors";
import { playbackExp, signPlaybackUrl, verifyPlayback } from "./playback-url";
import { rawCid } from "../blobs/raw-cid";

const secret = "playback-signing-key-at-least-32-characters";
const key = `blobs/alpha/${rawCid(Buffer.from("some audio"))}`;
const now = new Date("2025-01-01T00:00:00.000Z");
const nowSeconds = now.getTime() / 1000;

const queryOf = (url: string) => new URL(url).searchParams;
const signed = (at = now) => signPlaybackUrl({ baseUrl: "https://svc.example", key, secret, now: at });

const rejection = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return { status: errorStatus[error.code], code: error.code };
    throw error;
  }
  throw new Error("expected a rejection");
};

describe("playback URLs", () => {
  it("the URL is <base>/api/v1/audio?url=<path>&exp=<exp>&sig=<base64url HMAC-SHA256 over '<path>.<exp>'>", () => {
    const url = signed();
    const exp = nowSeconds + 3600;
    const sig = createHmac("sha256", secret).update(`${key}.${exp}`).digest("base64url");
    expect(url).toBe(`https://svc.example/api/v1/audio?url=${key}&exp=${exp}&sig=${sig}`);
    expect(verifyPlayback(queryOf(url), secret, now)).toMatchObject({ key, exp, appId: "alpha" });
  });

  it("exp is now + 3600 s rounded up to the next multiple of 900 s: every signing within one 15-minute window gives the identical URL", () => {
    // `now` is on a boundary: the window (now - 900 s, now] signs exp = now + 3600.
    const window = [-899, -600, -1, 0].map((offset) => signed(new Date(now.getTime() + offset * 1000)));
    expect(new Set(window)).toEqual(new Set([signed()]));
    expect(Number(queryOf(signed()).get("exp"))).toBe(nowSeconds + 3600);
    expect(Number(queryOf(signed(new Date(now.getTime() + 1000))).get("exp"))).toBe(nowSeconds + 3600 + 900);
    expect(Number(queryOf(signed(new Date(now.getTime() - 900_000))).get("exp"))).toBe(nowSeconds + 3600 - 900);
    // So a URL lives between 60 and 75 minutes.
    for (let offset = 0; offset < 1800; offset += 7) {
      const at = new Date(now.getTime() + offset * 1000);
      const lifetime = playbackExp(at) - Math.floor(at.getTime() / 1000);
      expect(lifetime).toBeGreaterThanOrEqual(3600);
      expect(lifetime).toBeLessThan(3600 + 900);
      expect(playbackExp(at) % 900).toBe(0);
    }
  });

  it("an exp more than 3600 + 900 s (plus a minute of clock skew) ahead is 403 FORBIDDEN however it is signed", () => {
    const at = (exp: number) => queryOf(signPlaybackUrl({ baseUrl: "https://svc.example", key, secret, now, exp }));
    expect(verifyPlayback(at(nowSeconds + 4500 + 60), secret, now).exp).toBe(nowSeconds + 4560);
    expect(rejection(() => verifyPlayback(at(nowSeconds + 4500 + 61), secret, now))).toEqual({ status: 403, code: "FORBIDDEN" });
    expect(rejection(() => verifyPlayback(at(nowSeconds + 10 * 365 * 86_400), secret, now))).toEqual({ status: 403, code: "FORBIDDEN" });
    // The longest lifetime ever issued (signed a second after a boundary) passes.
    const justAfter = new Date(now.getTime() + 1000);
    expect(() => verifyPlayback(queryOf(signed(justAfter)), secret, justAfter)).not.toThrow();
  });

  it("a missing url is 400 VALIDATION_ERROR", () => {
    expect(rejection(() => verifyPlayback(new URLSearchParams("exp=1&sig=x"), secret, now))).toEqual({ status: 400, code: "VALIDATION_ERROR" });
  });

  it("an unsigned URL (no sig or no exp) is 403 FORBIDDEN", () => {
    for (const drop of ["sig", "exp"]) {
      const query = queryOf(signed());
      query.delete(drop);
      expect(rejection(() => verifyPlayback(query, secret, now)), drop).toEqual({ status: 403, code: "FORBIDDEN" });
    }
  });

  it("a tampered URL (other path, other exp, other sig, other key) is 403 FORBIDDEN", () => {
    const other = `blobs/alpha/${rawCid(Buffer.from("other audio"))}`;
    const tampered = [
      (q: URLSearchParams) => q.set("url", other),
      (q: URLSearchParams) => q.set("url", key.replace("alpha", "beta")),
      (q: URLSearchParams) => q.set("exp", String(Number(q.get("exp")) + 3600)),
      (q: URLSearchParams) => q.set("sig", q.get("sig")!.replace(/^./, (c) => (c === "A" ? "B" : "A"))),
      (q: URLSearchParams) => q.set("sig", `${q.get("sig")}=`),
      (q: URLSearchParams) => q.set("sig", ""),
    ];
    for (const tamper of tampered) {
      const query = queryOf(signed());
      tamper(query);
      expect(rejection(() => verifyPlayback(query, secret, now))).toEqual({ status: 403, code: "FORBIDDEN" });
    }
    expect(rejection(() => verifyPlayback(queryOf(signed()), `${secret}x`, now))).toEqual({ status: 403, code: "FORBIDDEN" });
  });

  it("an expired URL is 403 FORBIDDEN, valid until then", () => {
    const query = queryOf(signed());
    expect(() => verifyPlayback(query, secret, new Date(now.getTime() + 3599_000))).not.toThrow();
    expect(rejection(() => verifyPlayback(query, secret, new Date(now.getTime() + 3600_000)))).toEqual({ status: 403, code: "FORBIDDEN" });
  });

  it("traversal (.., percent-encoded %2e%2e) and paths outside blobs/ are 403 FORBIDDEN even when signed", () => {
    const exp = nowSeconds + 3600;
    const signFor = (path: string) => createHmac("sha256", secret).update(`${path}.${exp}`).digest("base64url");
    for (const raw of ["blobs/../x", "blobs/%2e%2e/x", "blobs/alpha/%2e%2e", `blobs/alpha/..%2f..%2fetc`, "renditions/alpha/x.mp3", "etc/passwd", "/blobs/alpha/x", "blobs/alpha/not-a-cid"]) {
      const query = new URLSearchParams(`url=${raw}&exp=${exp}`);
      query.set("sig", signFor(query.get("url")!));
      expect(rejection(() => verifyPlayback(query, secret, now)), raw).toEqual({ status: 403, code: "FORBIDDEN" });
    }
  });
});
