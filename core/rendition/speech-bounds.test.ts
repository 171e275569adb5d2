import { describe, expect, it } from "vitest";
import { analysisRate, type Pcm } from "./pcm";
import { keptSilenceMs, speechBounds } from "./speech-bounds";

/** Deterministic white noise at `noiseDb` RMS with a tone at half scale between `from` and `to` seconds. */
function clip(seconds: number, from: number, to: number, noiseDb: number | null): Pcm {
  const samples = new Int16Array(seconds * analysisRate);
  let seed = 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const noise = noiseDb === null ? 0 : 10 ** (noiseDb / 20) * Math.sqrt(3);
  for (let i = 0; i < samples.length; i++) {
    const t = i / analysisRate;
    const tone = t >= from && t < to ? 0.5 * Math.sin(2 * Math.PI * 440 * t) : 0;
    samples[i] = Math.round((tone + noise * random()) * 32767);
  }
  return { samples, sampleRate: analysisRate };
}

describe("speech bounds from the measured noise floor", () => {
  it.each([null, -60, -40, -38])("keeps about 150 ms around the sound over noise at %s dBFS", (noiseDb) => {
    expect(speechBounds(clip(10, 1, 9, noiseDb))).toEqual({ startMs: 1000 - keptSilenceMs, endMs: 9000 + keptSilenceMs });
  });

  it("needs only a short pause to find the floor: 0.5 s of lead in a 60 s clip", () => {
    expect(speechBounds(clip(60, 0.5, 59.5, -40))).toEqual({ startMs: 500 - keptSilenceMs, endMs: 59500 + keptSilenceMs });
  });

  it("finds a short sound in a long silence", () => {
    expect(speechBounds(clip(30, 10, 11, -45))).toEqual({ startMs: 10000 - keptSilenceMs, endMs: 11000 + keptSilenceMs });
  });

  it("counts no window louder than -35 dBFS as silence: a clip with no pause loses none of its quieter sound", () => {
    // 1 s of tone at -9 dBFS RMS, then 0.5 s at -25 (the quieter part of a clip with no pause).
    const samples = new Int16Array(1.5 * analysisRate);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round((i < analysisRate ? 0.5 : 0.08) * Math.sin((2 * Math.PI * 440 * i) / analysisRate) * 32767);
    expect(speechBounds({ samples, sampleRate: analysisRate })).toBeUndefined();
    // Noise as loud as quiet speech: no level tells the two apart, so the clip is kept whole.
    expect(speechBounds(clip(10, 1, 9, -30))).toBeUndefined();
  });

  it("leaves alone all silence, all noise, and sound to both ends", () => {
    expect(speechBounds(clip(5, 0, 0, null))).toBeUndefined();
    expect(speechBounds(clip(5, 0, 0, -40))).toBeUndefined();
    expect(speechBounds(clip(5, 0, 5, -40))).toBeUndefined();
  });
});
