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
  /** The service's `requestId` (or a gateway's), for its logs; null when nothing was sent. */
  readonly requestId: string | null;
  /** Validation failures: which field, and why. */
  readonly issues: ValidationIssue[] | undefined;
  /** Seconds to wait before trying again (429). */
  readonly retryAfter: number | undefined;
  /** The Idempotency-Key the call was sent under (POST, PATCH): call again with it to get the call's own answer. */
  readonly idempotencyKey: string | undefined;
  /** The answer's text (its first 4096 characters): all there is of an answer not in the service's envelope (a gateway's, a WAF's, a CDN's). */
  readonly body: string | undefined;

  constructor(fields: {
    status: number;
    code: ErrorCode;
    message: string;
    requestId: string | null;
    issues?: ValidationIssue[];
    retryAfter?: number;
    idempotencyKey?: string;
    body?: string;
  }) {
    super(fields.message);
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.issues = fields.issues;
    this.retryAfter = fields.retryAfter;
    this.idempotencyKey = fields.idempotencyKey;
    this.body = fields.body;
  }
}

/** No answer came: the connection failed or the attempt timed out. The request may or may not have been served. */
export class SvcNetworkError extends Error {
  override readonly name = "SvcNetworkError";
  readonly timedOut: boolean;
  /** The Idempotency-Key the call was sent under: calling again with it never makes a second post. */
  readonly idempotencyKey: string | undefined;

  constructor(message: string, options: { timedOut: boolean; cause?: unknown; idempotencyKey?: string }) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut;
    this.idempotencyKey = options.idempotencyKey;
  }
}
