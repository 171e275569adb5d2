import type { components } from "./generated/openapi.js";

export type ErrorCode = components["schemas"]["Error"]["error"]["code"];
export type ValidationIssue = NonNullable<components["schemas"]["Error"]["error"]["issues"]>[number];

/**
 * The service answered with an error envelope (or, with `requestId` null, the client refused the call before
 * sending it, with the code the service would have answered).
 */
export class SvcError extends Error {
  override readonly name = "SvcError";
  readonly status: number;
  readonly code: ErrorCode;
  /** The service's `requestId`, for its logs; null when nothing was sent. */
  readonly requestId: string | null;
  /** Validation failures: which field, and why. */
  readonly issues: ValidationIssue[] | undefined;
  /** Seconds to wait before trying again (429). */
  readonly retryAfter: number | undefined;

  constructor(fields: { status: number; code: ErrorCode; message: string; requestId: string | null; issues?: ValidationIssue[]; retryAfter?: number }) {
    super(fields.message);
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.issues = fields.issues;
    this.retryAfter = fields.retryAfter;
  }
}

/** No answer came: the connection failed or the attempt timed out. The request may or may not have been served. */
export class SvcNetworkError extends Error {
  override readonly name = "SvcNetworkError";
  readonly timedOut: boolean;

  constructor(message: string, options: { timedOut: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut;
  }
}
