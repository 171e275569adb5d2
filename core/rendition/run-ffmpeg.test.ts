import { describe, expect, it } from "vitest";
import { resolveFfmpegPath } from "./ffmpeg-path";
import { FfmpegError, ffmpegRunsInFlight, runFfmpeg } from "./run-ffmpeg";

const ffmpeg = resolveFfmpegPath();
/** Ten seconds of 48 kHz float samples on stdout: 1.9 MB. */
const tenSecondsOfFloats = ["-f", "lavfi", "-i", "sine=f=440:r=48000:d=10", "-f", "f32le", "-c:a", "pcm_f32le", "pipe:1"];

describe("an ffmpeg run", () => {
  it("collects its stdout", async () => {
    expect((await runFfmpeg(ffmpeg, tenSecondsOfFloats, { collectStdout: true })).length).toBe(480_000 * 4);
  });

  it("whose collected stdout passes its limit is stopped and fails as an FfmpegError (answered 502), never left hanging", async () => {
    const error = await runFfmpeg(ffmpeg, tenSecondsOfFloats, { collectStdout: true, maxStdoutBytes: 1024 * 1024 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FfmpegError);
    expect((error as FfmpegError).message).toMatch(/more than 1048576 bytes/);
    expect(ffmpegRunsInFlight()).toBe(0);
  });
});
