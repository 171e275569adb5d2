import { randomInt } from "node:crypto";
import { isValidTid } from "@atproto/syntax";

const alphabet = "234567abcdefghijklmnopqrstuvwxyz";

// One random 10-bit clock id per process keeps TIDs minted in the same microsecond by two processes apart.
const clockId = randomInt(0, 1024);
let lastMicros = 0;

function s32(value: number, width: number): string {
  let out = "";
  for (let rest = value; rest > 0; rest = Math.floor(rest / 32)) out = alphabet[rest % 32] + out;
  return out.padStart(width, "2");
}

/**
 * A record key TID: 53-bit microsecond timestamp (of `at`, in ms, or just after the last TID) plus clock id,
 * base32-sortable, strictly increasing in this process.
 */
export function nextTid(at = Date.now()): string {
  // Milliseconds (which may step back) become a counter that moves past the last value instead.
  lastMicros = Math.max(at * 1000, lastMicros + 1);
  return s32(lastMicros, 11) + s32(clockId, 2);
}

/** The instant a TID stands for, to the millisecond. */
export function tidTime(tid: string): Date {
  const micros = [...tid.slice(0, 11)].reduce((n, c) => n * 32 + alphabet.indexOf(c), 0);
  return new Date(Math.floor(micros / 1000));
}

/** Whether `value` is a syntactically valid TID (for path parameters such as postId). */
export function isTid(value: unknown): value is string {
  return isValidTid(value);
}
