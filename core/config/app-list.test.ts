import { describe, expect, it } from "vitest";
import { parseAppList } from "./app-list";

function recordingLog() {
  const errors: { msg: string; extra?: object }[] = [];
  return { errors, log: { error: (msg: string, extra?: object) => void errors.push({ msg, extra }) } };
}
const anyValue = () => undefined;
const longToken = (tag: string) => `${tag}-${"x".repeat(40)}`;

describe("parseAppList", () => {
  it("splits each entry on the first colon, so values keep their colons", () => {
    const { log, errors } = recordingLog();
    const map = parseAppList("SVC_APP_DIDS", "a:did:web:example.com, b:did:web:localhost%3A3000:u:bob", anyValue, log);
    expect([...map]).toEqual([
      ["a", "did:web:example.com"],
      ["b", "did:web:localhost%3A3000:u:bob"],
    ]);
    expect(errors).toEqual([]);
  });

  it("trims whitespace and ignores empty entries", () => {
    const { log, errors } = recordingLog();
    const map = parseAppList("SVC_APP_TOKENS", " , a : one ,, b:two ,", anyValue, log);
    expect([...map]).toEqual([
      ["a", "one"],
      ["b", "two"],
    ]);
    expect(errors).toEqual([]);
  });

  it("an unset or empty variable is an empty list", () => {
    const { log } = recordingLog();
    expect(parseAppList("X", undefined, anyValue, log).size).toBe(0);
    expect(parseAppList("X", "", anyValue, log).size).toBe(0);
  });

  it("a malformed entry is dropped with an error and the other entries survive", () => {
    const { log, errors } = recordingLog();
    const secretish = "no-colon-secret-value-0000000000000000";
    const map = parseAppList("SVC_APP_TOKENS", `good:${longToken("g")},${secretish},:orphan-value,empty:,also:${longToken("a")}`, anyValue, log);
    expect([...map.keys()]).toEqual(["good", "also"]);
    expect(errors).toHaveLength(3);
    for (const e of errors) {
      expect(e.msg).toContain("SVC_APP_TOKENS");
      expect(e.msg).not.toContain(secretish);
      expect(e.msg).not.toContain("orphan-value");
    }
    expect(errors[2]!.msg).toContain('"empty"');
  });

  it("a value the validator rejects is dropped with an error naming the tenant and the variable, never the value", () => {
    const { log, errors } = recordingLog();
    const short = "short-secret";
    const map = parseAppList(
      "SVC_APP_TOKENS",
      `weak:${short},strong:${longToken("s")}`,
      (v) => (v.length < 32 ? "token is too short" : undefined),
      log,
    );
    expect([...map.keys()]).toEqual(["strong"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toContain('"weak"');
    expect(errors[0]!.msg).toContain("SVC_APP_TOKENS");
    expect(errors[0]!.msg).not.toContain(short);
    expect(JSON.stringify(errors[0]!.extra)).not.toContain(short);
  });

  it("a repeated appId keeps the first entry and logs an error", () => {
    const { log, errors } = recordingLog();
    const map = parseAppList("SVC_APP_DIDS", "a:first,a:second", anyValue, log);
    expect(map.get("a")).toBe("first");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toContain('"a"');
  });

  it("an appId that is not path-safe is dropped without echoing it", () => {
    const { log, errors } = recordingLog();
    const map = parseAppList("SVC_APP_DIDS", "../etc:v,a/b:v,a..b:v,ok.app-1_x:v", anyValue, log);
    expect([...map.keys()]).toEqual(["ok.app-1_x"]);
    expect(errors).toHaveLength(3);
    expect(errors.map((e) => e.msg).join()).not.toContain("etc");
  });

  it("an entry written token-first never logs the token as a tenant name", () => {
    const { log, errors } = recordingLog();
    const token = "abcdefghijklmnopqrstuvwxyz0123456789";
    const map = parseAppList("SVC_APP_TOKENS", `${token}:demo`, anyValue, log);
    expect(map.size).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).not.toContain(token);
  });
});
