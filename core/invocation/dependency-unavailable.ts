/**
 * Whether an error means a store or service the request needs could not be reached (answered 503
 * SERVICE_UNAVAILABLE) rather than a fault in this code (500 INTERNAL). Recognises the shapes the adapters'
 * clients throw: Node socket errors, Postgres connection SQLSTATEs, and AWS SDK server faults and throttling.
 */
const socketCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
// Class 08 (connection exception), admin/crash shutdown, cannot connect now, too many connections.
const postgresUnavailable = /^(08...|57P0[1-3]|53300)$/;
const awsUnavailable = new Set([
  "DatabaseResumingException",
  "ServiceUnavailableError",
  "ServiceUnavailableException",
  "InternalServerErrorException",
  "ThrottlingException",
  "SlowDown",
  "TimeoutError",
]);

export const isDependencyUnavailable = (error: unknown): boolean => {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, name, message, $fault } = e as { code?: unknown; name?: unknown; message?: unknown; $fault?: unknown };
    if (typeof code === "string" && (socketCodes.has(code) || postgresUnavailable.test(code))) return true;
    if (typeof name === "string" && awsUnavailable.has(name)) return true;
    if ($fault === "server") return true;
    if (typeof message === "string" && /^Connection terminated/.test(message)) return true;
  }
  return false;
};
