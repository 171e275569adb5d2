import { runInvocation } from "../../invocation/run-invocation";
import type { Logger } from "../../observability/logger";
import type { PassDeps } from "../../processing/run-pass";

/** What a job runs with: a pass's ports, or for jobs that run no pass (dead letters, the sweep) fewer. */
export type JobDeps = Pick<PassDeps, "sql" | "config" | "log" | "now" | "delivery">;

/** A job run as one invocation: its correlation id on every line, counted SQL, one summary line. */
export const asInvocation = <P extends JobDeps, T>(name: string, pass: P, fields: Record<string, unknown>, fn: (pass: P) => Promise<T>) =>
  runInvocation({ name, deps: { logger: pass.log as Logger, sql: pass.sql }, fields }, ({ sql, log, annotate }) =>
    fn({ ...pass, sql, log }).then((result) => {
      annotate({ outcome: result ?? "done" });
      return result;
    }),
  );
