import type { Server } from "node:net";

/**
 * `npm start -- --listener-from-parent`: a parent that has already bound the address (the benchmark, tests) hands
 * the listening socket over IPC, so the port it named in the configuration never goes free for another process to
 * take before this one listens. This process asks for it (`"listener?"`) only when it is ready to serve: a socket
 * it held meanwhile would take connections that nothing answers.
 */
export const listenerFromParentFlag = "--listener-from-parent";

/** The socket the parent hands over, when started with the flag; undefined otherwise. */
export const inheritedListener = (): Promise<Server> | undefined => {
  if (!process.argv.includes(listenerFromParentFlag)) return undefined;
  const { send } = process;
  if (!send) throw new Error(`${listenerFromParentFlag} needs an IPC channel to the parent (spawn with "ipc" in stdio)`);
  return new Promise((resolve, reject) => {
    process.once("message", (_message, handle) => {
      process.disconnect?.();
      if (handle && typeof (handle as Server).listen === "function") resolve(handle as Server);
      else reject(new Error(`${listenerFromParentFlag}: the parent sent no listening socket`));
    });
    send.call(process, "listener?");
  });
};
