import { describe, expect, it } from "vitest";
import { runTransaction } from "./nested-transaction";
import type { SqlValue } from "./port";

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection that records the statements it runs and how many were on it at once. */
const recordingConnection = () => {
  const ran: string[] = [];
  let running = 0;
  let most = 0;
  const query = async <Row>(text: string, _params?: readonly SqlValue[]): Promise<Row[]> => {
    most = Math.max(most, ++running);
    await tick(text.startsWith("slow") ? 30 : 2);
    running--;
    ran.push(text);
    if (text.startsWith("bad")) throw new Error(`${text} failed`);
    return [];
  };
  return { query, ran, most: () => most };
};

describe("a transaction is one session", () => {
  it("statements a transaction starts together run one after another, in the order they were started", async () => {
    const connection = recordingConnection();
    await runTransaction(connection.query, (tx) => Promise.all(["slow a", "b", "c"].map((text) => tx.query(text))));
    expect(connection.ran).toEqual(["slow a", "b", "c"]);
    expect(connection.most()).toBe(1);
  });

  it("savepoints and their statements keep the order they were started in", async () => {
    const connection = recordingConnection();
    await runTransaction(connection.query, (tx) => Promise.all([tx.query("slow a"), tx.transaction((inner) => inner.query("b"))]));
    expect(connection.ran).toEqual(["slow a", expect.stringMatching(/^SAVEPOINT /), "b", expect.stringMatching(/^RELEASE SAVEPOINT /)]);
    expect(connection.most()).toBe(1);
  });

  it("a transaction settles only after every statement it started: its COMMIT or ROLLBACK never overtakes one", async () => {
    const connection = recordingConnection();
    const failing = runTransaction(connection.query, async (tx) => {
      void tx.query("slow left running").catch(() => undefined);
      throw new Error("the caller gave up");
    });
    await expect(failing).rejects.toThrow("the caller gave up");
    expect(connection.ran).toEqual(["slow left running"]);

    const succeeding = runTransaction(connection.query, async (tx) => {
      void tx.query("slow not awaited");
      return "done";
    });
    await expect(succeeding).resolves.toBe("done");
    expect(connection.ran).toEqual(["slow left running", "slow not awaited"]);
  });

  it("a statement that fails while others wait for their turn still fails the transaction, and the rest still run", async () => {
    const connection = recordingConnection();
    const result = runTransaction(connection.query, (tx) =>
      Promise.allSettled([tx.query("bad a"), tx.query("b")]).then((outcomes) => outcomes.map((o) => o.status)),
    );
    await expect(result).rejects.toThrow(/a statement of this transaction failed/);
    expect(connection.ran).toEqual(["bad a", "b"]);
  });
});
