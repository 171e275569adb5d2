import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { lambdaNodeBinary } from "./lambda-node";

const runner = path.join(import.meta.dirname, "lambda-container-runner.mjs");


export interface LambdaContainer {
  node: string;
  /** The environment's process: its memory is what the function's memory setting must hold. */
  pid: number;
  initMs: number;
  /** stdout and stderr of the function so far (its log lines). */
  logs(): string;
  invoke<T = unknown>(event: unknown, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

/**
 * A function's execution environment as Lambda gives it: a fresh process on `nodeBinary` with exactly `env`
 * (the template's variables plus what the runtime itself sets), the bundle imported once, invocations in turn.
 */
export const startLambdaContainer = async (opts: {
  bundle: string;
  exportName: string;
  env: Record<string, string>;
  nodeBinary?: string;
}): Promise<LambdaContainer> => {
  const child: ChildProcess = fork(runner, [opts.bundle, opts.exportName], {
    execPath: opts.nodeBinary ?? lambdaNodeBinary(),
    env: opts.env,
    cwd: path.dirname(opts.bundle),
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let logs = "";
  child.stdout!.on("data", (d: Buffer) => (logs += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (logs += d.toString()));
  const pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const ready = new Promise<{ node: string; initMs: number }>((resolve, reject) => {
    child.once("message", (m: { ready: boolean; node: string; initMs: number; error?: { message: string } }) =>
      m.ready ? resolve(m) : reject(new Error(`Cold start of ${opts.bundle} failed: ${m.error?.message}\n${logs}`)),
    );
    child.once("exit", (code) => reject(new Error(`${opts.bundle} exited with ${code} before it was ready\n${logs}`)));
  });
  child.on("message", (m: { id?: string; result?: unknown; error?: { name: string; message: string; stack: string } }) => {
    if (!m.id) return;
    const waiter = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) waiter?.reject(Object.assign(new Error(`${m.error.name}: ${m.error.message}\n${logs}`), { name: m.error.name }));
    else waiter?.resolve(m.result);
  });
  const { node, initMs } = await ready;
  return {
    node,
    pid: child.pid!,
    initMs,
    logs: () => logs,
    invoke<T>(event: unknown, timeoutMs = 10_000) {
      const id = randomUUID();
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, event, timeoutMs });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill();
      });
    },
  };
};
