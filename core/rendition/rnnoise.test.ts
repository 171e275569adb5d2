/** rnnoise.ts: RNNoise's one frame of latency and the priming leave no trace in the denoised samples. */
import { describe, expect, it } from "vitest";
import { createNoiseSuppressor, rnnoiseSampleRate } from "./rnnoise";

/** Digital silence, then a 440 Hz tone at half scale to the end (where the priming stops: the burst it left). */
function silenceThenTone(silenceSamples: number, length: number): Float32Array {
  const samples = new Float32Array(length);
  for (let i = silenceSamples; i < length; i++) samples[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / rnnoiseSampleRate);
  return samples;
}

/** As denoise-audio.ts runs it: primed on the clip, then the clip pushed in uneven chunks and flushed. */
async function denoise(samples: Float32Array): Promise<Float32Array> {
  const suppressor = await createNoiseSuppressor();
  try {
    suppressor.prime(samples);
    const parts = [samples.subarray(0, 1000), samples.subarray(1000, 1333), samples.subarray(1333)].map((part) => suppressor.push(part));
    parts.push(suppressor.flush());
    const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
    parts.reduce((at, part) => (joined.set(part, at), at + part.length), 0);
    return joined;
  } finally {
    suppressor.close();
  }
}

const onset = (samples: Float32Array) => samples.findIndex((s) => Math.abs(s) > 0.05);

describe("RNNoise's latency and priming", () => {
  it.each([
    [2000, 3200],
    [9600, 14523],
  ])("keeps the sound where it was and the clip's length (tone from sample %i of %i)", async (silence, length) => {
    const samples = silenceThenTone(silence, length);
    const denoised = await denoise(samples);
    expect(denoised.length).toBe(samples.length);
    // Within a millisecond (RNNoise spreads an onset over its frame's window), not a frame (480 samples) late.
    expect(Math.abs(onset(denoised) - onset(samples))).toBeLessThanOrEqual(48);
    // The last samples come out too (a flush that fed no frame for the latency left them behind).
    expect(Math.max(...denoised.subarray(-100).map(Math.abs))).toBeGreaterThan(0.3);
  });

  it("adds nothing before the sound: no burst in the first 10 ms of a clip that starts silent and ends on sound", async () => {
    const denoised = await denoise(silenceThenTone(0.2 * rnnoiseSampleRate, 0.4 * rnnoiseSampleRate));
    const peak = Math.max(...denoised.subarray(0, 0.01 * rnnoiseSampleRate).map(Math.abs));
    expect(peak).toBeLessThan(10 ** (-80 / 20));
  });

  it("answers a clip shorter than a frame with as many samples", async () => {
    expect((await denoise(silenceThenTone(0, 100))).length).toBe(100);
  });
});
