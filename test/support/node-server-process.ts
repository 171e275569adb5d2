import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import path from "node:path";
import { listenerFromParentFlag } from "../../core/runtime/node/inherited-listener";

/** `npm start`'s entry, as a path inside a checkout. */
export const nodeServerEntry = "core/runtime/node/node-server.ts";

/**
 * An address bound here, then handed to `npm start`'s process (a real process, as `npm start` runs it) when it asks
 * for it, so the port named in its configuration is never free for another process to take in between.
 */
export async function nodeServerOnFreePort(): Promise<{ port: number; start(env: NodeJS.ProcessEnv, options?: StartOptions): ChildProcess }> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as AddressInfo;
  // Until the child has the socket, this process accepts on it too: a connection it takes is reset, and the client
  // (a health poll) tries again.
  listener.on("connection", (socket) => socket.destroy());
  return {
    port,
    start(env, { root = path.resolve(import.meta.dirname, "../.."), nodeArgs = [], stderr = "pipe" } = {}) {
      const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", path.join(root, nodeServerEntry), listenerFromParentFlag], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", stderr, "ipc"],
      });
      // This process's copy is closed once the child has its own; a child that never asks gets none.
      child.once("message", () => child.send("listener", listener, () => listener.close()));
      child.once("exit", () => listener.close());
      return child;
    },
  };
}

interface StartOptions {
  /** The checkout whose server runs (the benchmark may measure another one). */
  root?: string;
  nodeArgs?: string[];
  stderr?: "pipe" | "inherit";
}

/** `npm start`'s environment for one tenant on `port`: PGlite in memory, blobs under `dir`, custody at `did`. */
export const oneTenantEnv = ({ port, dir, token, did }: { port: number; dir: string; token: string; did: string }): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  NODE_ENV: "test",
  LOG_LEVEL: "info",
  DATABASE_URL: "pglite://memory",
  SVC_BLOB_DIR: path.join(dir, "blobs"),
  SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  SVC_PDS_HOST: "pds.test",
  SVC_PLAYBACK_SIGNING_KEY: "shutdown-playback-signing-key-0123456789abcdef",
  SVC_APP_TOKENS: `tenant:${token}`,
  SVC_APP_DIDS: `tenant:${did}`,
});
