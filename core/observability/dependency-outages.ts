/**
 * A dependency that is down is an event, not a stack trace per request: one warning when it goes down, one when it
 * comes back with how many requests it failed in between (docs/operations.md#where-to-look). Each request's own
 * line still carries its status and `errorCode`.
 */
import { rootOf, type Logger } from "./logger";

export interface DependencyOutages {
  /**
   * A request (or job) failed because `dependency` could not be reached: warns on the first one of an outage, with
   * that request's id, as every line a request writes carries.
   */
  failed(dependency: string, error: unknown, requestId: string): void;
  /** `dependency` answered: ends its outage, if it had one, with one line. */
  succeeded(dependency: string): void;
  /** An invocation finished without a failure: ends the outages of dependencies that have no success signal of their own. */
  invocationSucceeded(): void;
}

/** Dependencies whose every call reports its success (the SQL port), so only an answer from them ends their outage. */
const signalled = new Set(["database"]);

interface Outage {
  since: number;
  failedRequests: number;
}

const describe = (error: unknown) => {
  const { message, code, name } = (error ?? {}) as { message?: unknown; code?: unknown; name?: unknown };
  return { reason: typeof message === "string" ? message.slice(0, 300) : String(error), ...(typeof code === "string" && { code }), ...(typeof name === "string" && name !== "Error" && { name }) };
};

export const createDependencyOutages = (log: Logger, now: () => number = Date.now): DependencyOutages => {
  const outages = new Map<string, Outage>();
  const end = (dependency: string, outage: Outage) => {
    outages.delete(dependency);
    // The process's line, not a request's: it sums the outage's requests, so it carries no one request's id.
    log.warn("dependency available again", { dependency, failedRequests: outage.failedRequests, outageMs: now() - outage.since });
  };
  return {
    failed(dependency, error, requestId) {
      const outage = outages.get(dependency);
      if (outage) {
        outage.failedRequests += 1;
        return;
      }
      outages.set(dependency, { since: now(), failedRequests: 1 });
      log.warn("dependency unavailable", { requestId, dependency, ...describe(error) });
    },
    succeeded(dependency) {
      if (outages.size === 0) return; // the common case, on every statement
      const outage = outages.get(dependency);
      if (outage) end(dependency, outage);
    },
    invocationSucceeded() {
      if (outages.size === 0) return;
      for (const [dependency, outage] of outages) if (!signalled.has(dependency)) end(dependency, outage);
    },
  };
};

const byRoot = new WeakMap<Logger, DependencyOutages>();

/** The process's outages, one set per root logger, so every invocation of a process counts into the same ones. */
export const dependencyOutages = (logger: Logger): DependencyOutages => {
  const root = rootOf(logger);
  let outages = byRoot.get(root);
  if (!outages) byRoot.set(root, (outages = createDependencyOutages(root)));
  return outages;
};
