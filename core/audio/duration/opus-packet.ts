/** Samples (at 48 kHz) of one Opus packet, from its TOC byte and, for code 3, its frame count byte (RFC 6716 3.1). */
export function opusPacketSamples(toc: number, second: number | undefined): number {
  const config = toc >> 3;
  let frame: number;
  if (config < 12) frame = [480, 960, 1920, 2880][config & 3]!; // SILK: 10, 20, 40, 60 ms
  else if (config < 16) frame = config & 1 ? 960 : 480; // hybrid: 10, 20 ms
  else frame = [120, 240, 480, 960][config & 3]!; // CELT: 2.5, 5, 10, 20 ms
  const code = toc & 3;
  // Code 3 packs any number of frames (Chromium's MediaRecorder puts three 20 ms frames in each packet).
  const count = code === 0 ? 1 : code < 3 ? 2 : (second ?? 0) & 0x3f;
  // A packet may hold at most 120 ms.
  return Math.min(frame * count, 5760);
}
