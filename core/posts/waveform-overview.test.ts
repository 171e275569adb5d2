import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Waveform } from "../records/stage-outputs";
import { waveformOverview } from "./waveform-overview";

const waveformOf = (channels: number, peaks: [number, number][], samplesPerPixel = 400): Waveform => ({
  version: 2,
  channels,
  sample_rate: 8000,
  samples_per_pixel: samplesPerPixel,
  bits: 8,
  length: peaks.length / channels,
  data: peaks.flatMap(([a, b]) => [Math.min(a, b), Math.max(a, b)]),
});

const peak = fc.tuple(fc.integer({ min: -128, max: 127 }), fc.integer({ min: -128, max: 127 }));
const waveform = fc
  .tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 3000 }), fc.constantFrom(80, 256, 400, 2205))
  .chain(([channels, length, spp]) => fc.array(peak, { minLength: length * channels, maxLength: length * channels }).map((peaks) => waveformOf(channels, peaks, spp)));

describe("waveform overviews for list items", () => {
  it("a waveform of more than 256 points becomes at most 256, spanning the whole clip: samples_per_pixel times a whole factor, min of mins and max of maxes per bucket", () => {
    fc.assert(
      fc.property(waveform, (full) => {
        const overview = waveformOverview(full);
        if (full.length <= 256) return;
        expect(overview.length).toBeLessThanOrEqual(256);
        const factor = overview.samples_per_pixel / full.samples_per_pixel;
        expect(Number.isInteger(factor)).toBe(true);
        expect(overview.length).toBe(Math.ceil(full.length / factor));
        // The whole clip, and no more than one bucket beyond it.
        expect(overview.length * overview.samples_per_pixel).toBeGreaterThanOrEqual(full.length * full.samples_per_pixel);
        expect((overview.length - 1) * overview.samples_per_pixel).toBeLessThan(full.length * full.samples_per_pixel);
        expect({ ...overview, data: undefined, length: undefined, samples_per_pixel: undefined }).toEqual({ ...full, data: undefined, length: undefined, samples_per_pixel: undefined });
        const { channels } = full;
        expect(overview.data).toHaveLength(overview.length * channels * 2);
        for (let bucket = 0; bucket < overview.length; bucket++) {
          for (let channel = 0; channel < channels; channel++) {
            const points = Array.from({ length: Math.min(factor, full.length - bucket * factor) }, (_, i) => (bucket * factor + i) * channels + channel);
            expect(overview.data[(bucket * channels + channel) * 2]).toBe(Math.min(...points.map((p) => full.data[p * 2]!)));
            expect(overview.data[(bucket * channels + channel) * 2 + 1]).toBe(Math.max(...points.map((p) => full.data[p * 2 + 1]!)));
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it("a waveform of 256 points or fewer is left as it is", () => {
    for (const length of [1, 100, 256]) {
      const full = waveformOf(1, Array.from({ length }, (_, i) => [-(i % 128), i % 128] as [number, number]));
      expect(waveformOverview(full)).toEqual(full);
    }
  });

  it("ten minutes at 20 points a second (12,000 points) becomes 256 buckets of 47 points (the last one short)", () => {
    const full = waveformOf(1, Array.from({ length: 12_000 }, (_, i) => [-(i % 100), i % 100] as [number, number]));
    const overview = waveformOverview(full);
    expect(overview.length).toBe(256);
    expect(overview.samples_per_pixel).toBe(400 * 47);
    expect(JSON.stringify(overview).length).toBeLessThan(JSON.stringify(full).length / 40);
  });
});
