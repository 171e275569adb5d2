/** make-waveform.ts: the same BBC JSON v2 as waveform-data's generator gives for the same samples, point for point. */
import { describe, expect, it } from "vitest";
import WaveformData from "waveform-data";
import { makeWaveform } from "./make-waveform";
import type { Pcm } from "./pcm";

/** What waveform-data makes of the samples (the generator this service used before). */
const reference = (pcm: Pcm) =>
  new Promise((resolve, reject) => {
    const channel = Float32Array.from(pcm.samples, (s) => s / 32768);
    const audioBuffer = { numberOfChannels: 1, sampleRate: pcm.sampleRate, length: channel.length, getChannelData: () => channel };
    WaveformData.createFromAudio({ audio_buffer: audioBuffer as never, scale: Math.round(pcm.sampleRate / 20), bits: 8, disable_worker: true }, (error, waveform) =>
      error ? reject(error) : resolve(waveform.toJSON()),
    );
  });

/** Deterministic full-scale samples, both extremes included. */
function samples(count: number, seed: number): Int16Array {
  const out = new Int16Array(count);
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = (x % 65536) - 32768;
  }
  if (count > 2) [out[0], out[1]] = [-32768, 32767];
  return out;
}

describe("the waveform", () => {
  it.each([0, 1, 399, 400, 401, 8000 * 3 + 17, 8000 * 60])("equals waveform-data's for %i samples at 8 kHz, the last point from what remains", async (count) => {
    const pcm = { samples: samples(count, count + 1), sampleRate: 8000 };
    expect(makeWaveform(pcm)).toEqual(await reference(pcm));
  });

  it("equals waveform-data's for quiet audio, where the 8-bit rounding of small negative samples shows", async () => {
    const pcm = { samples: Int16Array.from(samples(4000, 9), (s) => s >> 10), sampleRate: 8000 };
    expect(makeWaveform(pcm)).toEqual(await reference(pcm));
  });
});
