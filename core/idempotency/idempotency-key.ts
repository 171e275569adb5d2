import { createHash } from "node:crypto";
import { encode } from "@ipld/dag-cbor";
import { DomainError } from "../domain-error";

const ows = (c: string | undefined) => c === " " || c === "\t";

/** Strips spaces and tabs from both ends, in a loop: `/[ \t]+$/` takes quadratic time on a long inner run of them. */
const trimOws = (s: string): string => {
  let start = 0;
  let end = s.length;
  while (start < end && ows(s[start])) start++;
  while (end > start && ows(s[end - 1])) end--;
  return s.slice(start, end);
};

/**
 * Reads the `Idempotency-Key` header: undefined when absent, else 1 to 255 printable ASCII characters
 * (0x20-0x7E, not blank); anything else is 400 VALIDATION_ERROR. Only HTTP's optional whitespace (space, tab) is
 * trimmed: `trim()` also strips Unicode whitespace (NBSP, BOM, U+3000), which made `key\u00a0` replay `key`.
 */
export function parseIdempotencyKey(header: string): string;
export function parseIdempotencyKey(header: string | undefined): string | undefined;
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = trimOws(header);
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw new DomainError("VALIDATION_ERROR", "Idempotency-Key must be 1 to 255 printable ASCII characters", [
      { path: ["headers", "idempotency-key"], message: "1 to 255 printable ASCII characters" },
    ]);
  }
  return key;
}

/** sha256 hex of the body's dag-cbor encoding, which sorts map keys, so key order and whitespace do not matter. */
export const fingerprint = (body: unknown): string => createHash("sha256").update(encode(body)).digest("hex");
