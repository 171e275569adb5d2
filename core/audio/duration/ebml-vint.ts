/** EBML (Matroska, WebM) variable-length integers: element IDs and sizes, block track numbers and lace sizes. */

/** Element header fields: an EBML variable-length integer; `marker` keeps the length bit (as IDs are written). */
export function vint(bytes: Buffer, at: number, marker: boolean): { value: number; length: number; unknown: boolean } | undefined {
  const first = bytes[at];
  if (first === undefined || first === 0) return undefined;
  const length = Math.clz32(first) - 23;
  if (at + length > bytes.length) return undefined;
  let value = marker ? first : first & (0xff >> length);
  let allOnes = value === (0xff >> length);
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[at + i]!;
    if (bytes[at + i] !== 0xff) allOnes = false;
  }
  return { value, length, unknown: !marker && allOnes };
}
