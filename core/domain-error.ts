/**
 * Errors the domain throws: a code from the closed set of docs/decisions.md#envelope-and-errors, a message for the caller, and
 * validation issues. No HTTP status: the HTTP edge maps codes to statuses (`core/http/errors.ts`), and a worker maps
 * the same codes to "retry" or "settle failed".
 */
export const errorCodes = [
  "VALIDATION_ERROR",
  "UNSUPPORTED_MEDIA_TYPE",
  "FILE_TOO_LARGE",
  "UNAUTHORIZED",
  "ACTING_ACTOR_REQUIRED",
  "FORBIDDEN",
  "NOT_A_PARTICIPANT",
  "NOT_FOUND",
  "IDEMPOTENCY_IN_PROGRESS",
  "PAYLOAD_TOO_LARGE",
  "IDEMPOTENCY_KEY_REUSED",
  "RATE_LIMITED",
  "INTERNAL",
  "SERVICE_UNAVAILABLE",
  "TENANT_UNAVAILABLE",
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export interface Issue {
  path: (string | number)[];
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly issues?: Issue[],
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const validationError = (message: string, issues?: Issue[]) => new DomainError("VALIDATION_ERROR", message, issues);

