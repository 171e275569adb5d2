import type { SqlBackend } from "../../core/sql/port";

interface Hold {
  text: string;
  reached: () => void;
  released: Promise<void>;
  fails: boolean;
}

/**
 * A database whose next statement containing a given text is held until released: a request stalled there, as on a
 * slow database (or, never released, as a process that died there). `open` wraps a backend's opener; `stalled`
 * sends a request and resolves once it is held, with its pending answer and the release. `fails`: the held
 * statement then fails instead of running, as a lost connection.
 */
export const heldSql = () => {
  let hold: Hold | undefined;
  const open = (backend: () => Promise<SqlBackend>) => async (): Promise<SqlBackend> => {
    const sql = await backend();
    const stall = async (text: string) => {
      const held = hold && text.includes(hold.text) ? hold : undefined;
      if (!held) return;
      hold = undefined;
      held.reached();
      await held.released;
      if (held.fails) throw new Error("the connection to the database was lost");
    };
    return { ...sql, query: async (text, params) => (await stall(text), sql.query(text, params)) } as SqlBackend;
  };
  const stalled = async <T>(text: string, send: () => Promise<T>, fails = false) => {
    let release!: () => void;
    const reached = new Promise<void>((reached) => (hold = { text, reached, released: new Promise((r) => (release = r)), fails }));
    const first = send();
    await reached;
    return { first, release };
  };
  return { open, stalled };
};
