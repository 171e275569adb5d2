import type { ErrorCode } from "../domain-error";

/** The one map from domain error codes to HTTP statuses (docs/decisions.md#envelope-and-errors). */
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
} as const satisfies Record<ErrorCode, number>;
