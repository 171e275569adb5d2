import { randomUUID } from "node:crypto";
import type { DomainError } from "../domain-error";
import { invocationLogger, type Logger } from "../observability/logger";
import { countStatements } from "../sql/count-statements";
import type { Sql, SqlValue } from "../sql/port";
import { rollbackFailureOf } from "../sql/rollback-failure";
import { dependencyOutages, type DependencyOutages } from "../observability/dependency-outages";
import { classifyError } from "./classify-error";
import { dependencyOf, isDependencyUnavailable, tagDependency } from "./dependency-unavailable";

/** What every invocation (an HTTP request, an SQS job, a system call, a sweep) gets. */
export interface Invocation {
  /** The correlation id: on every log line of the invocation, and echoed to HTTP callers. */
  requestId: string;
  log: Logger;
  /** The invocation's SQL, counted for its log line (`sqlStatements`). Use it instead of `deps.sql`. */
  sql: Sql & { readonly count: number };
  /** Adds fields to the invocation's one summary log line (status, appId, postId...). */
  annotate(fields: Record<string, unknown>): void;
  /** Classifies a failure the invocation handles itself (answers it) rather than throws: logged once, coded on the line. */
  failed(error: unknown): DomainError;
}

export interface InvocationOptions {
  /** Names the invocation on its log line: the route's file, or the job (`process-audio`, `sweep`). */
  name: string;
  deps: { logger: Logger; sql?: Sql };
  /** A correlation id carried in (an SQS message attribute, a validated X-Request-ID); a fresh UUID otherwise. */
  requestId?: string;
  /** Fields for the summary line known up front (method, path). */
  fields?: Record<string, unknown>;
  /** The summary line's message: `invocation` by default; the HTTP edge logs `request`. */
  message?: string;
}

const noSql: Sql = {
  query: () => Promise.reject(new Error("this invocation has no SQL port (add \"sql\" to the route's uses)")),
  transaction: () => Promise.reject(new Error("this invocation has no SQL port (add \"sql\" to the route's uses)")),
};

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The invocation's SQL: every answer ends a database outage and every unreachable failure is tagged as the
 * database's, for the outage log; a transaction whose ROLLBACK failed too is logged with the request id (unless the
 * database is simply gone, which the outage log says once), and its own error is still the one thrown.
 */
const watchedSql = (sql: Sql, log: Logger, outages: DependencyOutages): Sql => {
  const answered = <T>(result: T) => (outages.succeeded("database"), result);
  const unanswered = (error: unknown): never => {
    if (isDependencyUnavailable(error)) tagDependency(error, "database");
    throw error;
  };
  return {
    query: <Row>(text: string, params?: readonly SqlValue[]) => sql.query<Row>(text, params).then(answered, unanswered),
    transaction: (fn) =>
      sql.transaction(fn).catch((error: unknown) => {
        const rollback = rollbackFailureOf(error);
        if (rollback !== undefined && !isDependencyUnavailable(rollback)) {
          log.error("ROLLBACK failed after a failed transaction", { reason: reasonOf(rollback), transactionError: reasonOf(error) });
        }
        return unanswered(error);
      }),
  };
};

/**
 * Runs one invocation: a correlation id, a logger carrying it, counted SQL, error classification, and exactly one
 * summary log line (`invocation`, `durationMs`, `sqlStatements`, `errorCode` when it failed, and annotations).
 *
 *   await runInvocation({ name: "process-audio", deps, requestId: message.requestId }, async ({ sql, log }) => {
 *     await processPost(sql, postId);
 *   });
 *
 * A throw from `fn` is logged (with its stack unless it is a DomainError) and rethrown classified as a DomainError
 * (`SERVICE_UNAVAILABLE` for an unreachable dependency, `INTERNAL` otherwise, the original as `cause`), so a worker
 * can map its code to retry or settle-failed. The HTTP edge answers failures itself through `failed()`.
 */
export const runInvocation = async <T>(options: InvocationOptions, fn: (invocation: Invocation) => Promise<T>): Promise<T> => {
  const started = performance.now();
  const requestId = options.requestId ?? randomUUID();
  const log = invocationLogger(options.deps.logger, requestId);
  const line: Record<string, unknown> = { invocation: options.name, ...options.fields };
  const outages = dependencyOutages(options.deps.logger);
  const failed = (error: unknown): DomainError => {
    const { failure, expected } = classifyError(error);
    // A dependency that is down is logged once per outage (dependency-outages.ts); a fault, with its stack, each time.
    if (!expected && failure.code === "SERVICE_UNAVAILABLE") outages.failed(dependencyOf(error), error, requestId);
    else if (!expected) log.error("unhandled error", error instanceof Error ? error : new Error(String(error)));
    line.errorCode = failure.code;
    return failure;
  };
  const invocation: Invocation = {
    requestId,
    log,
    sql: countStatements(watchedSql(options.deps.sql ?? noSql, log, outages)),
    annotate: (fields) => Object.assign(line, fields),
    failed,
  };
  try {
    const result = await fn(invocation);
    if (line.errorCode === undefined) outages.invocationSucceeded();
    return result;
  } catch (error) {
    const failure = failed(error);
    throw failure === error ? error : Object.assign(failure, { cause: error });
  } finally {
    line.durationMs = Math.round(performance.now() - started);
    line.sqlStatements = invocation.sql.count;
    log.info(options.message ?? "invocation", line);
  }
};
