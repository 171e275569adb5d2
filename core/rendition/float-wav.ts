/**
 * A 32-bit float WAV as ffmpeg streams it to a pipe (`-f wav -c:a pcm_f32le pipe:1`), read as it arrives: its
 * header says how many channels there are (raw f32le would not), then the samples follow. Written to a pipe, the
 * data chunk's size is a placeholder, so the data runs to the end of the stream.
 */
export interface FloatWavStream {
  channels: number;
  /** Interleaved samples, whole frames (a sample of every channel) per chunk. */
  samples: AsyncGenerator<Float32Array>;
}

export async function openFloatWav(source: AsyncIterable<Buffer>): Promise<FloatWavStream> {
  const chunks = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let header: { channels: number; dataAt: number } | undefined;
  while (!(header = wavHeader(head))) {
    const next = await chunks.next();
    if (next.done) throw new Error("decoded audio ended before its WAV header");
    head = Buffer.concat([head, next.value]);
  }
  const { channels, dataAt } = header;
  const frameBytes = 4 * channels;
  async function* samples(): AsyncGenerator<Float32Array> {
    let rest: Buffer = head.subarray(dataAt);
    for (;;) {
      const whole = rest.length - (rest.length % frameBytes);
      if (whole > 0) {
        // Copied into aligned memory: the pipe's bytes sit at any offset of Node's buffers.
        const chunk = new Float32Array(whole / 4);
        new Uint8Array(chunk.buffer).set(rest.subarray(0, whole));
        yield chunk;
      }
      rest = rest.subarray(whole);
      const next = await chunks.next();
      if (next.done) return;
      rest = rest.length > 0 ? Buffer.concat([rest, next.value]) : next.value;
    }
  }
  return { channels, samples: samples() };
}

/** The channel count and where the samples start, once `bytes` hold the header up to the data chunk. */
function wavHeader(bytes: Buffer): { channels: number; dataAt: number } | undefined {
  if (bytes.length < 12) return undefined;
  if (bytes.toString("latin1", 0, 4) !== "RIFF" || bytes.toString("latin1", 8, 12) !== "WAVE") throw new Error("decoded audio is not a WAV stream");
  let channels = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString("latin1", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "data") {
      if (channels < 1) throw new Error("decoded WAV has no channel count before its data");
      return { channels, dataAt: at + 8 };
    }
    if (id === "fmt ") {
      if (at + 10 + 2 > bytes.length) return undefined;
      channels = bytes.readUInt16LE(at + 10);
    }
    at += 8 + size + (size % 2);
  }
  return undefined;
}

/** One channel of interleaved samples. */
export const channelOf = (samples: Float32Array, channels: number, channel: number): Float32Array => {
  const plane = new Float32Array(samples.length / channels);
  for (let frame = 0; frame < plane.length; frame++) plane[frame] = samples[frame * channels + channel]!;
  return plane;
};

/** The planes interleaved again as f32le bytes, for an encoder's stdin. */
export function interleave(planes: readonly Float32Array[]): Buffer {
  const frames = planes[0]?.length ?? 0;
  const samples = new Float32Array(frames * planes.length);
  planes.forEach((plane, channel) => {
    for (let frame = 0; frame < frames; frame++) samples[frame * planes.length + channel] = plane[frame]!;
  });
  return Buffer.from(samples.buffer);
}
