/** The closed set of error codes (CONTRACT.md section 2) and the one error type handlers throw. */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  UNSUPPORTED_MEDIA_TYPE: 400,
  FILE_TOO_LARGE: 400,
  UNAUTHORIZED: 401,
  ACTING_ACTOR_REQUIRED: 401,
  FORBIDDEN: 403,
  NOT_A_PARTICIPANT: 403,
  NOT_FOUND: 404,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
  TENANT_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface Issue {
  path: (string | number)[];
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly issues?: Issue[],
    /** Extra response headers (Retry-After, RateLimit, Content-Range...). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = errorStatus[code];
  }
}

export const validationError = (message: string, issues?: Issue[]) => new AppError("VALIDATION_ERROR", message, issues);
