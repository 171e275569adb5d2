/**
 * The body every rendition route takes: `{ appId, cid, mimeType }` naming `blobs/<appId>/<cid>`, and for `/v1/trim`
 * optionally `measureOutput` (a normalize follows); unknown fields are refused.
 */
import * as z from "zod";
import { acceptedMimeTypes } from "../records/accepted-types";
import { isRawCid } from "../blobs/raw-cid";
import { isAppId } from "../tenancy/app-id";
import type { RenditionSource } from "./rendition-context";

export const renditionRequestSchema = z.strictObject({
  appId: z.string().refine(isAppId, "must be a well-formed appId"),
  cid: z.string().refine(isRawCid, "must be a raw sha2-256 CIDv1 in base32"),
  mimeType: z.enum(acceptedMimeTypes as [string, ...string[]]),
  measureOutput: z.boolean().optional(),
});

export interface RequestIssue {
  path: (string | number)[];
  message: string;
}

export type ParsedRequest = { ok: true; source: RenditionSource } | { ok: false; issues: RequestIssue[] };

export function parseRenditionRequest(body: string): ParsedRequest {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, issues: [{ path: [], message: "body must be JSON" }] };
  }
  const parsed = renditionRequestSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, issues: parsed.error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)), message: i.message })) };
  }
  return { ok: true, source: parsed.data as RenditionSource };
}
