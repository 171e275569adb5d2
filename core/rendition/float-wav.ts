/**
 * The channels of a 32-bit float WAV as ffmpeg writes it to a pipe (`-f wav -c:a pcm_f32le pipe:1`): the header
 * says how many channels there are, which raw f32le would not. Written to a pipe, the data chunk's size is left as
 * a placeholder, so the data runs to the end of the bytes.
 */
export function splitFloatWav(bytes: Buffer): Float32Array[] {
  if (bytes.length < 12 || bytes.toString("latin1", 0, 4) !== "RIFF" || bytes.toString("latin1", 8, 12) !== "WAVE") {
    throw new Error("decoded audio is not a WAV stream");
  }
  let channels = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString("latin1", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "fmt ") channels = bytes.readUInt16LE(at + 10);
    if (id === "data") {
      if (channels < 1) throw new Error("decoded WAV has no channel count before its data");
      return deinterleave(bytes.subarray(at + 8), channels);
    }
    at += 8 + size + (size % 2);
  }
  throw new Error("decoded WAV has no data chunk");
}

function deinterleave(data: Buffer, channels: number): Float32Array[] {
  const frames = Math.floor(data.length / (4 * channels));
  // Copied once into aligned memory: the pipe's bytes sit at any offset of Node's buffers.
  const samples = new Float32Array(frames * channels);
  new Uint8Array(samples.buffer).set(data.subarray(0, samples.byteLength));
  const planes = Array.from({ length: channels }, () => new Float32Array(frames));
  planes.forEach((plane, channel) => {
    for (let frame = 0; frame < frames; frame++) plane[frame] = samples[frame * channels + channel]!;
  });
  return planes;
}

/** The planes interleaved again as f32le bytes, for an encoder's stdin. */
export function interleave(planes: readonly Float32Array[]): Buffer {
  const frames = planes[0]?.length ?? 0;
  const samples = new Float32Array(frames * planes.length);
  planes.forEach((plane, channel) => {
    for (let frame = 0; frame < frames; frame++) samples[frame * planes.length + channel] = plane[frame]!;
  });
  return Buffer.from(samples.buffer);
}
