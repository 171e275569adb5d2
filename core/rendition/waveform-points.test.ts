/**
 * waveform-points.ts: the same BBC JSON v2 as waveform-data's generator gives for the same samples, point for point,
 * whatever the pieces the samples arrive in; and ffmpeg's streamed WAV read as it comes.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import WaveformData from "waveform-data";
import { ffmpeg } from "../../test/support/rendition-fixtures";
import { FfmpegError } from "./run-ffmpeg";
import { WavWaveform, WaveformPoints, waveformSourceOutput } from "./waveform-points";

/** What waveform-data makes of the samples (the generator this service used before). */
const reference = (samples: Int16Array, sampleRate: number) =>
  new Promise((resolve, reject) => {
    const channel = Float32Array.from(samples, (s) => s / 32768);
    const audioBuffer = { numberOfChannels: 1, sampleRate, length: channel.length, getChannelData: () => channel };
    WaveformData.createFromAudio({ audio_buffer: audioBuffer as never, scale: Math.round(sampleRate / 20), bits: 8, disable_worker: true }, (error, waveform) =>
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

/** The samples pushed in pieces of `piece` samples. */
function pointsOf(all: Int16Array, sampleRate: number, piece = all.length || 1) {
  const points = new WaveformPoints(sampleRate);
  for (let at = 0; at < all.length; at += piece) points.push(all.subarray(at, at + piece));
  return points.finish();
}

describe("the waveform", () => {
  it.each([
    [0, 8000],
    [1, 8000],
    [399, 8000],
    [400, 8000],
    [401, 8000],
    [8000 * 3 + 17, 8000],
    [48000 * 2 + 5, 48000],
    [44100 * 2 + 3, 44100],
    [22050 * 3, 22050],
  ])("equals waveform-data's for %i samples at %i Hz, the last point from what remains", async (count, rate) => {
    const all = samples(count, count + 1);
    expect(pointsOf(all, rate)).toEqual(await reference(all, rate));
  });

  it("is the same whatever pieces the samples arrive in", () => {
    const all = samples(48000 * 3 + 11, 5);
    const whole = pointsOf(all, 48000);
    for (const piece of [1, 7, 2399, 2400, 2401, 32768]) expect(pointsOf(all, 48000, piece)).toEqual(whole);
  });

  it("equals waveform-data's for quiet audio, where the 8-bit rounding of small negative samples shows", async () => {
    const quiet = Int16Array.from(samples(4000, 9), (s) => s >> 10);
    expect(pointsOf(quiet, 8000)).toEqual(await reference(quiet, 8000));
  });
});

describe("the waveform of ffmpeg's streamed WAV", () => {
  // 1.5 s at 44.1 kHz of a tone under noise, written as the rendition service writes it (to a pipe, sizes unknown).
  const wav = execFileSync(ffmpeg, [
    ...["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=f=440:r=44100:d=1.5,volume=3"],
    ...waveformSourceOutput.map((arg) => (arg === "pipe:3" ? "pipe:1" : arg)),
  ]);
  const dataAt = wav.indexOf("data") + 8;
  const pcm = new Int16Array(Buffer.from(wav.subarray(dataAt)).buffer);

  it("takes its rate from the header and its points from every sample after `data`, however the stream is cut", () => {
    const expected = pointsOf(pcm, 44100);
    expect(expected).toMatchObject({ sample_rate: 44100, samples_per_pixel: 2205, length: 30 });
    for (const cut of [1, 3, 13, dataAt - 1, dataAt + 1, 4095, 65536]) {
      const waveform = new WavWaveform();
      for (let at = 0; at < wav.length; at += cut) waveform.push(wav.subarray(at, at + cut));
      expect(waveform.finish(), `pieces of ${cut} bytes`).toEqual(expected);
    }
  });

  it("a header that never reaches its samples (a chunk size left at 4 GiB) fails as ffmpeg's failure once past 64 KiB, not after the whole decode", () => {
    const waveform = new WavWaveform();
    const unfixed = Buffer.concat([wav.subarray(0, 12), Buffer.from("LIST"), Buffer.from([0xff, 0xff, 0xff, 0xff])]);
    waveform.push(unfixed);
    let pushed = unfixed.length;
    const push = () => {
      for (; pushed < 1 << 20; pushed += 4096) waveform.push(Buffer.alloc(4096));
    };
    expect(push).toThrow(FfmpegError);
    expect(pushed).toBeLessThan(80 * 1024);
  });

  it("is refused when the stream is not WAV or ends before its samples", () => {
    expect(() => new WavWaveform().push(Buffer.from("OggS and more bytes"))).toThrow(/not WAV/);
    const cut = new WavWaveform();
    cut.push(wav.subarray(0, 20));
    expect(() => cut.finish()).toThrow(/ended before its samples/);
  });
});
