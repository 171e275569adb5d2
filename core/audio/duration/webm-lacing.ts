/** Lacing in WebM blocks (RFC 9559): several frames in one block, their sizes in a header before them. */
import { vint } from "./ebml-vint";
import { opusPacketSamples } from "./opus-packet";

/**
 * The samples (at 48 kHz) of a laced Opus block's frames, each from its own TOC byte; `at` is the block's frame
 * count byte. Undefined when the lace header does not fit the block. RFC 9559 lacing: Xiph sizes are runs of bytes
 * summed up to one below 255, EBML sizes a vint then signed differences, fixed-size lacing splits the rest evenly;
 * the last frame takes what is left.
 */
export function lacedOpusSamples(block: Buffer, at: number, lacing: number): number | undefined {
  if (at >= block.length) return undefined;
  const count = block[at]! + 1;
  let pos = at + 1;
  const sizes: number[] = [];
  if (lacing === 1) {
    for (let i = 0; i < count - 1; i++) {
      let size = 0;
      let byte: number | undefined;
      do {
        byte = block[pos++];
        if (byte === undefined) return undefined;
        size += byte;
      } while (byte === 255);
      sizes.push(size);
    }
  } else if (lacing === 3) {
    for (let i = 0; i < count - 1; i++) {
      const size = vint(block, pos, false);
      if (!size) return undefined;
      pos += size.length;
      sizes.push(i === 0 ? size.value : sizes[i - 1]! + size.value - (2 ** (7 * size.length - 1) - 1));
    }
  } else {
    const each = (block.length - pos) / count;
    if (!Number.isInteger(each)) return undefined;
    sizes.push(...Array<number>(count - 1).fill(each));
  }
  let samples = 0;
  for (const size of [...sizes, block.length - pos - sizes.reduce((sum, size) => sum + size, 0)]) {
    if (size < 0 || pos + size > block.length) return undefined;
    // An empty frame has no TOC byte: it states no length, so it is counted as none.
    if (size > 0) samples += opusPacketSamples(block[pos]!, size > 1 ? block[pos + 1] : undefined);
    pos += size;
  }
  return samples;
}
