/** Reading ebur128's summary and ashowinfo's line out of ffmpeg's info log. */
import { describe, expect, it } from "vitest";
import { parseLoudnessReport } from "./loudness-report";

const info = "[Parsed_ashowinfo_4 @ 0x1] n:0 pts:0 pts_time:0 pos:78 fmt:s16 channels:2 chlayout:stereo rate:44100 nb_samples:1 checksum:0\n";
const summary = (i: string, lra: string, peak: string) =>
  `[Parsed_ebur128_1 @ 0x2] Summary:\n\n  Integrated loudness:\n    I:         ${i} LUFS\n    Threshold: -30.0 LUFS\n\n  Loudness range:\n    LRA:         ${lra} LU\n    Threshold: -40.0 LUFS\n\n  True peak:\n    Peak:      ${peak} dBFS\n`;

describe("loudness report", () => {
  it("reads the last summary: ffmpeg may configure the graph twice and print an empty one first", () => {
    expect(parseLoudnessReport(summary("-70.0", "0.0", "-inf") + info + summary("-23.4", "5.6", "-1.2"))).toEqual({
      loudness: { integratedLufs: -23.4, truePeakDbtp: -1.2, rangeLu: 5.6 },
      channels: 2,
      sampleRate: 44100,
    });
  });

  it("gives null for no gated loudness (ebur128's -70 floor) and for the -inf peak of digital silence", () => {
    expect(parseLoudnessReport(info + summary("-70.0", "0.0", "-inf"))?.loudness).toEqual({ integratedLufs: null, truePeakDbtp: null, rangeLu: null });
    expect(parseLoudnessReport(info + summary("-70.0", "0.0", "-69.0"))?.loudness).toEqual({ integratedLufs: null, truePeakDbtp: -69, rangeLu: null });
  });

  it("is undefined when the log holds no complete report", () => {
    expect(parseLoudnessReport(summary("-23.4", "5.6", "-1.2"))).toBeUndefined();
    expect(parseLoudnessReport(info)).toBeUndefined();
    expect(parseLoudnessReport(info + summary("nan", "5.6", "-1.2"))).toBeUndefined();
  });
});
