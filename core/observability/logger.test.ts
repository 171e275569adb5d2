import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, type LogExtra } from "./logger";

/** The stdout lines `log` writes, parsed, with the timestamp checked and set aside. */
const linesOf = (log: () => void) => {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    log();
  } finally {
    spy.mockRestore();
  }
  return lines.map((line) => {
    expect(line.endsWith("\n")).toBe(true);
    const { timestamp, ...rest } = JSON.parse(line) as Record<string, unknown>;
    expect(new Date(timestamp as string).toISOString()).toBe(timestamp);
    return JSON.stringify(rest);
  });
};

describe("the Node host's plain info lines", () => {
  afterEach(() => vi.restoreAllMocks());

  const cases: [string, LogExtra[]][] = [
    ["request", [{ requestId: "r-1" }, { invocation: "get-post", method: "GET", path: "/api/v1/posts/x", status: 200, appId: undefined, durationMs: 3, sqlStatements: 1 }]],
    ["listening", [{ url: "http://127.0.0.1:3000", backend: "postgres" }]],
    ["nested", [{ requestId: "r-2" }, { when: new Date(0), list: [1, "two", null], inner: { a: 1, b: null } }]],
    ["bare", []],
  ];

  it.each(cases)("a %s line is written exactly as Powertools writes it", (message, extra) => {
    const powertools = createLogger("info");
    const plain = createLogger("info", { plainInfo: true });
    const expected = linesOf(() => powertools.info(message, ...extra));
    expect(expected).toHaveLength(1);
    expect(linesOf(() => plain.info(message, ...extra))).toEqual(expected);
  });

  it("info lines are not written below the configured level, and an Error still gets Powertools' serialisation", () => {
    expect(linesOf(() => createLogger("warn", { plainInfo: true }).info("quiet", { a: 1 }))).toEqual([]);
    const error = new Error("boom");
    const plain = linesOf(() => createLogger("info", { plainInfo: true }).info("failed", { requestId: "r" }, error));
    expect(plain).toEqual(linesOf(() => createLogger("info").info("failed", { requestId: "r" }, error)));
    expect(JSON.parse(plain[0]!).error.message).toBe("boom");
  });
});
