import type { HttpResponse } from "../http-message/http-message";

/** What the middleware chain produces: a JSON envelope still to be serialised, or a raw response (bytes, redirect). */
export type Outcome =
  | { kind: "json"; status: number; body: unknown; headers: Record<string, string> }
  | { kind: "raw"; response: HttpResponse };

export const successBody = (data: unknown) => ({ success: true as const, data });
