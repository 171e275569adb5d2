/**
 * Lengths as lexicons count them: `maxGraphemes` counts grapheme clusters (what a reader calls characters)
 * and `maxLength` counts UTF-8 bytes, not JavaScript's UTF-16 units.
 */
const segmenter = new Intl.Segmenter();
const encoder = new TextEncoder();

export function graphemeLength(text: string): number {
  let count = 0;
  for (const _ of segmenter.segment(text)) count++;
  return count;
}

export function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}
