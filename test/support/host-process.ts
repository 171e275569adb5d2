import type { ChildProcess } from "node:child_process";
import { startDidServer } from "./did-server";
import { nodeServerOnFreePort } from "./node-server-process";

export const hostToken = "host-process-token-0123456789abcdef0123456789";

export interface HostLine {
  level?: string;
  message?: string;
  [field: string]: unknown;
}

/**
 * `npm start`'s process (a real process, which a test can kill -9 and start again on the same database and blob
 * store), serving one tenant `host` with `hostToken`; its JSON log lines are kept, parsed, in order.
 */
export const hostProcesses = async () => {
  const dids = await startDidServer();
  dids.publish("host", "pds.test");
  const running = new Set<ChildProcess>();

  const start = async (env: Record<string, string>) => {
    const { port, start: spawn } = await nodeServerOnFreePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn({
      PATH: process.env.PATH,
      NODE_ENV: "test",
      LOG_LEVEL: "info",
      SVC_PUBLIC_BASE_URL: url,
      SVC_PDS_HOST: "pds.test",
      SVC_PLAYBACK_SIGNING_KEY: "host-process-playback-signing-key-0123456789",
      SVC_APP_TOKENS: `host:${hostToken}`,
      SVC_APP_DIDS: `host:${dids.didOf("host")}`,
      ...env,
    });
    running.add(child);
    const lines: HostLine[] = [];
    let output = "";
    let gone = false;
    const waiters = new Set<() => void>();
    const exited = new Promise<void>((resolve) =>
      child.once("exit", () => {
        running.delete(child);
        gone = true;
        for (const wake of waiters) wake();
        resolve();
      }),
    );
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      let newline;
      while ((newline = output.indexOf("\n")) >= 0) {
        const text = output.slice(0, newline);
        output = output.slice(newline + 1);
        try {
          lines.push(JSON.parse(text) as HostLine);
        } catch {
          lines.push({ message: text });
        }
      }
      for (const wake of waiters) wake();
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);

    /** Resolves with the first line (from index `from`) that matches; rejects if the process exits first. */
    const waitForLine = (match: (line: HostLine) => boolean, { from = 0, timeoutMs = 45_000 } = {}) =>
      new Promise<HostLine>((resolve, reject) => {
        const dump = () => lines.map((l) => JSON.stringify(l)).join("\n");
        const check = () => {
          const found = lines.slice(from).find(match);
          if (!found && !gone) return;
          waiters.delete(check);
          clearTimeout(timer);
          if (found) resolve(found);
          else reject(new Error(`host exited:\n${dump()}`));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such log line within ${timeoutMs} ms:\n${dump()}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });

    await waitForLine((line) => line.message === "listening");
    return {
      url,
      child,
      lines,
      waitForLine,
      fetch: (path: string, init: RequestInit & { actor?: string } = {}) =>
        fetch(url + path, {
          ...init,
          headers: { authorization: `Bearer ${hostToken}`, ...(init.actor && { "x-svc-acting-actor": init.actor }), ...(init.headers as Record<string, string>) },
        }),
      /** kill -9: no handler runs, nothing is flushed or cleaned up. */
      async kill9() {
        child.kill("SIGKILL");
        await exited;
      },
      async stop() {
        child.kill("SIGTERM");
        await exited;
      },
    };
  };

  return {
    start,
    async close() {
      for (const child of running) child.kill("SIGKILL");
      await dids.close();
    },
  };
};

export type HostProcess = Awaited<ReturnType<Awaited<ReturnType<typeof hostProcesses>>["start"]>>;
