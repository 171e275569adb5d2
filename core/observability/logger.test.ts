import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, type LogExtra } from "./logger";

/** What `log` writes to stdout, a string per write, once the turn's batched lines are out too. */
const writesOf = async (log: () => void, streams: NodeJS.WriteStream[] = [process.stdout]) => {
  const writes: string[] = [];
  const spies = streams.map((stream) =>
    vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    }),
  );
  try {
    log();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return writes;
};

/** The stdout lines `log` writes, parsed, with the timestamp checked and set aside. */
const linesOf = async (log: () => void) => {
  const writes = await writesOf(log);
  for (const write of writes) expect(write.endsWith("\n")).toBe(true);
  return writes.join("").split("\n").filter(Boolean).map((line) => {
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

  it.each(cases)("a %s line is written exactly as Powertools writes it", async (message, extra) => {
    const powertools = createLogger("info");
    const plain = createLogger("info", { plainInfo: true });
    const expected = await linesOf(() => powertools.info(message, ...extra));
    expect(expected).toHaveLength(1);
    expect(await linesOf(() => plain.info(message, ...extra))).toEqual(expected);
  });

  it("info lines are not written below the configured level, and an Error still gets Powertools' serialisation", async () => {
    expect(await linesOf(() => createLogger("warn", { plainInfo: true }).info("quiet", { a: 1 }))).toEqual([]);
    const error = new Error("boom");
    const plain = await linesOf(() => createLogger("info", { plainInfo: true }).info("failed", { requestId: "r" }, error));
    expect(plain).toEqual(await linesOf(() => createLogger("info").info("failed", { requestId: "r" }, error)));
    expect(JSON.parse(plain[0]!).error.message).toBe("boom");
  });

  it("the info lines of one turn of the event loop go to stdout in one write, and a line of another level writes them first, so the order holds", async () => {
    const plain = createLogger("info", { plainInfo: true });
    const batched = await writesOf(() => {
      plain.info("one", { n: 1 });
      plain.info("two", { n: 2 });
      plain.info("three", { n: 3 });
    });
    expect(batched).toHaveLength(1);
    expect(batched[0]!.split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { message: string }).message)).toEqual(["one", "two", "three"]);

    const ordered = await writesOf(() => {
      plain.info("before", { n: 1 });
      plain.warn("warned", { n: 2 });
      plain.info("after", { n: 3 });
    }, [process.stdout, process.stderr]);
    const messages = ordered.join("").split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { message: string }).message);
    // Powertools writes warnings to stderr: the batched line is out before it all the same.
    expect(messages).toEqual(["before", "warned", "after"]);
  });
});
