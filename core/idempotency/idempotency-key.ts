import { createHash } from "node:crypto";
import { encode } from "@ipld/dag-cbor";
import { DomainError } from "../domain-error";

/**
 * Reads the `Idempotency-Key` header: undefined when absent, else 1 to 255 printable ASCII characters
 * (0x20-0x7E, surrounding whitespace trimmed as HTTP does, not blank); anything else is 400 VALIDATION_ERROR.
 */
export function parseIdempotencyKey(header: string): string;
export function parseIdempotencyKey(header: string | undefined): string | undefined;
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = header.trim();
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw new DomainError("VALIDATION_ERROR", "Idempotency-Key must be 1 to 255 printable ASCII characters", [
      { path: ["headers", "idempotency-key"], message: "1 to 255 printable ASCII characters" },
    ]);
  }
  return key;
}

/** sha256 hex of the body's dag-cbor encoding, which sorts map keys, so key order and whitespace do not matter. */
export const fingerprint = (body: unknown): string => createHash("sha256").update(encode(body)).digest("hex");
