/**
 * MP3 (MPEG audio layers I-III): walks frame headers, skipping each frame's body by the length its header gives,
 * and counts the samples of the whole frames present. Xing, Info and VBRI frames are skipped, never believed, so
 * a VBR file without them is measured as exactly as one with them, and a lying frame count changes nothing. The
 * one thing taken from a tag is the LAME extension's encoder delay and padding, which players trim (ffmpeg, and
 * every gapless player): at most 4095 samples each, so a lying tag moves the result by under 200 ms at worst.
 */
import { type AudioMeter, type Measured, noAudio, samplesToMs } from "./audio-meter";
import { ByteWalker, read, type Step, skip } from "./byte-walker";

const bitrates = {
  v1l1: [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
// Indexed by the version bits: 0 MPEG 2.5, 1 reserved, 2 MPEG 2, 3 MPEG 1.
const sampleRates = [[11025, 12000, 8000], [], [22050, 24000, 16000], [44100, 48000, 32000]];

interface Frame {
  /** Version, layer and sample rate bits: every frame of one stream shares them. */
  kind: number;
  length: number;
  samples: number;
  rate: number;
  /** Where a Xing or Info tag would start (after the side information), for the first frame. */
  tagAt: number;
}

function parseHeader(b0: number, b1: number, b2: number, b3: number): Frame | undefined {
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 3;
  const layer = (b1 >> 1) & 3; // 3: layer I, 2: layer II, 1: layer III
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (version === 1 || layer === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const mpeg1 = version === 3;
  const table = layer === 3 ? (mpeg1 ? bitrates.v1l1 : bitrates.v2l1) : mpeg1 ? (layer === 2 ? bitrates.v1l2 : bitrates.v1l3) : bitrates.v2l23;
  const bitrate = table[bitrateIndex]! * 1000;
  const rate = sampleRates[version]![rateIndex]!;
  const padding = (b2 >> 1) & 1;
  const mono = b3 >> 6 === 3;
  let length: number;
  let samples: number;
  if (layer === 3) {
    length = (Math.floor((12 * bitrate) / rate) + padding) * 4;
    samples = 384;
  } else {
    const perSlot = layer === 1 && !mpeg1 ? 72 : 144;
    length = Math.floor((perSlot * bitrate) / rate) + padding;
    samples = layer === 1 && !mpeg1 ? 576 : 1152;
  }
  const sideInfo = mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { kind: (b1 & 0x1e) | (rateIndex << 5), length, samples, rate, tagAt: 4 + sideInfo };
}

/** How far past lost sync (junk, a damaged frame, trailing tags) to look for the next frame before giving up. */
const resyncBudget = 64 * 1024;

export function createMp3Meter(): AudioMeter {
  let locked: number | undefined;
  let confirmed = false;
  let rate = 0;
  let samples = 0;
  let frames = 0;
  let lastEnd = 0;
  let lastSamples = 0;
  let lostAt = 0;
  // The LAME tag's encoder delay and end padding, in samples.
  let delay = 0;
  let padding = 0;

  // A 4-byte window slid one byte at a time while out of sync.
  let w0 = 0;
  let w1 = 0;
  let w2 = 0;

  const count = (frame: Frame, start: number) => {
    samples += frame.samples;
    frames += 1;
    lastEnd = start + frame.length;
    lastSamples = frame.samples;
  };

  /** A frame header whose 4 bytes ended just before `next`: take it, and skip or inspect its body. */
  const onFrame = (frame: Frame, start: number): Step | undefined => {
    if (locked === undefined) {
      locked = frame.kind;
      rate = frame.rate;
    }
    if (frames === 0 && frame.length >= frame.tagAt + 4) {
      // The first frame may be a Xing/Info/VBRI tag frame: silent metadata, not audio.
      return read(frame.length - 4, (body) => {
        const tag = body.toString("latin1", frame.tagAt - 4, frame.tagAt);
        const vbri = body.length >= 36 && body.toString("latin1", 32, 36) === "VBRI";
        if (tag === "Xing" || tag === "Info") [delay, padding] = lameGap(body, frame.tagAt - 4);
        else if (!vbri) count(frame, start);
        return header;
      });
    }
    count(frame, start);
    return skip(frame.length - 4, toHeader);
  };

  const lost = (at: number): Step | undefined => {
    if (!confirmed) {
      // The frame we locked onto was not followed by another: it was a false sync in junk.
      locked = undefined;
      samples = frames = lastEnd = lastSamples = 0;
    }
    lostAt = at;
    return slide;
  };

  const header: Step = read(4, (b, at) => {
    const frame = parseHeader(b[0]!, b[1]!, b[2]!, b[3]!);
    if (frame && frame.kind === locked) {
      if (frames > 0) confirmed = true;
      return onFrame(frame, at);
    }
    // Out of sync: look again from the next byte.
    w0 = b[1]!;
    w1 = b[2]!;
    w2 = b[3]!;
    return lost(at + 1);
  });

  const toHeader = () => header;

  const slide: Step = read(1, (b, at) => {
    const b3 = b[0]!;
    const frame = parseHeader(w0, w1, w2, b3);
    if (frame && (locked === undefined || frame.kind === locked)) return onFrame(frame, at - 3);
    if (at - lostAt > resyncBudget) return undefined;
    w0 = w1;
    w1 = w2;
    w2 = b3;
    return slide;
  });

  // ID3v2 tags (several may follow one another) come before the first frame; their size is stated, syncsafe.
  const start: Step = read(3, (b, at) => {
    if (b.toString("latin1") === "ID3") {
      return read(7, (rest) => {
        const size = ((rest[3]! & 0x7f) << 21) | ((rest[4]! & 0x7f) << 14) | ((rest[5]! & 0x7f) << 7) | (rest[6]! & 0x7f);
        const footer = rest[2]! & 0x10 ? 10 : 0;
        return skip(size + footer, () => start);
      });
    }
    w0 = b[0]!;
    w1 = b[1]!;
    w2 = b[2]!;
    lostAt = at;
    return slide;
  });

  const walker = new ByteWalker(start);

  return {
    push: (bytes) => walker.push(bytes),
    finish(totalBytes): Measured {
      // A final frame cut short by the end of the file plays nothing.
      const truncated = lastEnd > totalBytes;
      const whole = truncated ? samples - lastSamples : samples;
      if (whole <= 0) return noAudio("no MPEG audio frames");
      // The padding is at the end: a file cut short has lost it with its last frames.
      return { durationMs: samplesToMs(Math.max(whole - delay - (truncated ? 0 : padding), 0), rate) };
    },
  };
}

/**
 * The encoder delay and end padding of a LAME extension after the Xing/Info tag at `at` (in the frame's body), or
 * none. The tag's optional fields come first, as its flags say; the extension names its encoder (LAME, or Lavc as
 * ffmpeg writes it) and gives the two 12-bit counts 21 bytes in.
 */
function lameGap(body: Buffer, at: number): [number, number] {
  if (at + 8 > body.length) return [0, 0];
  const flags = body.readUInt32BE(at + 4);
  const lame = at + 8 + (flags & 1 ? 4 : 0) + (flags & 2 ? 4 : 0) + (flags & 4 ? 100 : 0) + (flags & 8 ? 4 : 0);
  if (lame + 24 > body.length || !/^(LAME|Lavc|Lavf|GOGO)/.test(body.toString("latin1", lame, lame + 4))) return [0, 0];
  const gap = (body[lame + 21]! << 16) | (body[lame + 22]! << 8) | body[lame + 23]!;
  return [gap >> 12, gap & 0xfff];
}
