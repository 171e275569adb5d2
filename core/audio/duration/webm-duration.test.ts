import { describe, expect, it } from "vitest";
import { encodedNoise } from "../../../test/support/audio-fixtures";
import { decodedBytesMs, measuredMs } from "../../../test/support/measured-duration";

const measure = (bytes: Buffer) => measuredMs(bytes, "audio/webm");
const decoded = decodedBytesMs;

/** An EBML variable-length integer `length` bytes long. */
const vintOf = (value: number, length: number) => {
  const bytes = Buffer.alloc(length);
  for (let i = length - 1, rest = value; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
  bytes[0]! |= 0x80 >> (length - 1);
  return bytes;
};
/** The shortest one that holds `value` (all ones is reserved); signed, a value biased by half the range. */
const vint = (value: number) => {
  let length = 1;
  while (value >= 2 ** (7 * length) - 1) length++;
  return vintOf(value, length);
};
const signedVint = (value: number) => {
  let length = 1;
  while (Math.abs(value) >= 2 ** (7 * length - 1) - 1) length++;
  return vintOf(value + 2 ** (7 * length - 1) - 1, length);
};

/** Element headers read back: the ID's bytes as written, and where the body begins and ends. */
function* children(bytes: Buffer) {
  for (let at = 0; at < bytes.length; ) {
    const idLength = Math.clz32(bytes[at]!) - 23;
    const sizeAt = at + idLength;
    const sizeLength = Math.clz32(bytes[sizeAt]!) - 23;
    let size = bytes[sizeAt]! & (0xff >> sizeLength);
    for (let i = 1; i < sizeLength; i++) size = size * 256 + bytes[sizeAt + i]!;
    const start = sizeAt + sizeLength;
    yield { id: bytes.subarray(at, sizeAt), body: bytes.subarray(start, start + size) };
    at = start + size;
  }
}

const element = (id: Buffer, body: Buffer) => Buffer.concat([id, vint(body.length), body]);

const ids = { segment: 0x18538067, seekHead: 0x114d9b74, cues: 0x1c53bb6b, cluster: 0x1f43b675, simpleBlock: 0xa3, blockGroup: 0xa0, block: 0xa1 };
const idOf = (id: Buffer) => id.readUIntBE(0, id.length);

/** A SimpleBlock's body, or the Block's inside a BlockGroup. */
const blockOf = ({ id, body }: { id: Buffer; body: Buffer }) => {
  if (idOf(id) === ids.simpleBlock) return body;
  if (idOf(id) === ids.blockGroup) return [...children(body)].find((child) => idOf(child.id) === ids.block)?.body;
  return undefined;
};

/**
 * The WebM re-muxed with each run of `frames` blocks within a cluster laced into one SimpleBlock, as ffmpeg never
 * writes them but other muxers may. A BlockGroup's Block joins the run (its DiscardPadding goes); Cues and
 * SeekHead are dropped, as their offsets no longer hold.
 */
function laced(webm: Buffer, frames: number, lacing: "xiph" | "ebml"): Buffer {
  const relace = (cluster: Buffer) => {
    const out: Buffer[] = [];
    let run: Buffer[] = [];
    const flush = () => {
      if (run.length === 0) return;
      // Track number, timestamp and flags from the first block; then the lace header and the frames.
      const trackLength = Math.clz32(run[0]![0]!) - 23;
      const head = Buffer.from(run[0]!.subarray(0, trackLength + 3));
      const frameBytes = run.map((block) => block.subarray(trackLength + 3));
      const sizes = frameBytes.slice(0, -1).map((frame) => frame.length);
      let lace: Buffer[] = [];
      if (run.length > 1 && lacing === "xiph") {
        head[trackLength + 2]! |= 0x02;
        lace = sizes.map((size) => Buffer.from([...Array<number>(Math.floor(size / 255)).fill(255), size % 255]));
      } else if (run.length > 1) {
        head[trackLength + 2]! |= 0x06;
        // The first size, then each one's difference from the one before.
        lace = sizes.map((size, i) => (i === 0 ? vint(size) : signedVint(size - sizes[i - 1]!)));
      }
      if (run.length > 1) lace.unshift(Buffer.from([run.length - 1]));
      out.push(element(Buffer.from([ids.simpleBlock]), Buffer.concat([head, ...lace, ...frameBytes])));
      run = [];
    };
    for (const child of children(cluster)) {
      const block = blockOf(child);
      if (block) {
        run.push(block);
        if (run.length === frames) flush();
      } else {
        flush();
        out.push(element(child.id, child.body));
      }
    }
    flush();
    return Buffer.concat(out);
  };
  const out: Buffer[] = [];
  for (const { id, body } of children(webm)) {
    if (idOf(id) !== ids.segment) {
      out.push(element(id, body));
      continue;
    }
    const segment: Buffer[] = [];
    for (const child of children(body)) {
      const name = idOf(child.id);
      if (name === ids.cues || name === ids.seekHead) continue;
      segment.push(element(child.id, name === ids.cluster ? relace(child.body) : child.body));
    }
    out.push(element(id, Buffer.concat(segment)));
  }
  return Buffer.concat(out);
}

const opus = ["-c:a", "libopus", "-b:a", "64k", "-ar", "48000", "-f", "webm"];
const encoders = { Opus: opus, Vorbis: ["-c:a", "libvorbis", "-ar", "48000", "-f", "webm"] };

describe("WebM lacing", () => {
  it.each([
    ["Opus", 8, "xiph", 25],
    ["Opus", 3, "ebml", 25],
    // Vorbis frames state no length: the last block's are taken to last as long as the block before's did, so
    // within one long Vorbis block (2048 samples, 43 ms).
    ["Vorbis", 8, "xiph", 43],
    ["Vorbis", 4, "ebml", 43],
  ] as const)(
    "a laced block lasts its frames: %s, %i frames a block (%s lacing), within %i ms of what ffmpeg decodes",
    async (codec, frames, lacing, within) => {
      const { bytes } = await encodedNoise(`webm-${codec}-7s`, "audio/webm", 7.3, encoders[codec]);
      const relaced = laced(bytes, frames, lacing);
      // Still all the audio (less the end an Opus BlockGroup's DiscardPadding trimmed): a faithful re-mux.
      expect(Math.abs((await decoded(relaced)) - (await decoded(bytes)))).toBeLessThanOrEqual(20);
      const ms = await measure(relaced);
      expect(Math.abs(ms - (await decoded(relaced))), `${ms} ms`).toBeLessThanOrEqual(within);
    },
  );

  it("a laced block lasts its frames: a 0.3 s Opus clip laced into one block lasts what its frames' TOC bytes state", async () => {
    // No block before it to take a gap from: only the frames themselves say how long it plays.
    const { bytes } = await encodedNoise("webm-Opus-0.3s", "audio/webm", 0.3, opus);
    const relaced = laced(bytes, 64, "xiph");
    const ms = await measure(relaced);
    expect(Math.abs(ms - (await decoded(relaced))), `${ms} ms`).toBeLessThanOrEqual(25);
  });
});
