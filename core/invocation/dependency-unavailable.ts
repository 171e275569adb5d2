/**
 * Whether an error means a store or service the request needs could not be reached, or could not answer in time
 * (answered 503 SERVICE_UNAVAILABLE), rather than a fault in this code (500 INTERNAL). Recognises what every
 * backend's client throws: Node socket errors, Postgres SQLSTATEs (pg and PGlite put them in `code`; the Data API
 * adapter copies them there from the message), pg's own connection and timeout errors, PGlite closed, and AWS SDK
 * server faults, throttling, timeouts and the Data API's resume and link failures.
 */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
]);

/**
 * SQLSTATE classes and codes of an unavailable database: 08 connection exception, 53 insufficient resources (too many
 * connections, out of memory or disk), 55000 object not in prerequisite state (a database with ALLOW_CONNECTIONS
 * false), 55P03 lock not available (lock_timeout), 57014 statement timeout, 57P01-57P05 shutdown, cannot connect now
 * and idle timeouts, 58 system errors, 25006 read-only transaction (a failover in progress).
 */
const postgresUnavailable = /^(08...|53...|55000|55P03|57014|57P0[1-5]|58...|25006)$/;

const awsUnavailable = new Set([
  "DatabaseResumingException",
  "DatabaseUnavailableException",
  "StatementTimeoutException",
  "ServiceUnavailableError",
  "ServiceUnavailableException",
  "InternalServerErrorException",
  "ThrottlingException",
  "TooManyRequestsException",
  "SlowDown",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
]);

/** Messages of errors that carry no code: pg's connection and read timeouts, PGlite after close, Data API links. */
const unavailableMessage =
  /^Connection terminated|^timeout exceeded when trying to connect|^Query read timeout|^PGlite is closed|Communications link failure|^Client has encountered a connection error/;

export const isDependencyUnavailable = (error: unknown): boolean => {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DependencyUnavailableError) return true;
    const { code, name, message, $fault } = e as { code?: unknown; name?: unknown; message?: unknown; $fault?: unknown };
    if (typeof code === "string" && (socketCodes.has(code) || postgresUnavailable.test(code))) return true;
    if (typeof name === "string" && awsUnavailable.has(name)) return true;
    if ($fault === "server") return true;
    if (typeof message === "string" && unavailableMessage.test(message)) return true;
  }
  return false;
};

const tags = new WeakMap<object, string>();

/** Names the dependency an error came from, where the port knows it (the SQL port tags its own as "database"). */
export const tagDependency = (error: unknown, dependency: string): void => {
  if (error && typeof error === "object" && !tags.has(error)) tags.set(error, dependency);
};

/**
 * An outage a port recognised in its own terms (a service answering 5xx or timing out), which no generic rule above
 * would: named, so the invocation logs it once per outage as that dependency's, with its cause's message.
 */
export class DependencyUnavailableError extends Error {
  constructor(dependency: string, cause: Error) {
    super(cause.message, { cause });
    this.name = "DependencyUnavailableError";
    tagDependency(this, dependency);
  }
}

/** The dependency an unavailable error names: its tag, else the address a socket error carries, else "unknown". */
export const dependencyOf = (error: unknown): string => {
  const chain: object[] = [];
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) chain.push(e);
  for (const e of chain) {
    const tag = tags.get(e);
    if (tag) return tag;
  }
  for (const e of chain) {
    const { address, port, hostname } = e as { address?: unknown; port?: unknown; hostname?: unknown };
    if (typeof address === "string") return port === undefined ? address : `${address}:${String(port)}`;
    if (typeof hostname === "string") return hostname;
  }
  return "unknown";
};
