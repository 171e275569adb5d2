/** How many channels a file's first audio stream has, as ffmpeg decodes it: the header of a moment of it as WAV. */
import { Readable } from "node:stream";
import type { AudioFamily } from "../records/accepted-types";
import { ffmpegInput } from "./ffmpeg-input";
import { openFloatWav } from "./float-wav";
import { runFfmpeg } from "./run-ffmpeg";

export async function channelCount(ffmpeg: string, path: string, family: AudioFamily, signal?: AbortSignal): Promise<number> {
  const wav = await runFfmpeg(ffmpeg, [...ffmpegInput(path, family), "-map", "0:a:0", "-t", "0.05", "-f", "wav", "-c:a", "pcm_f32le", "pipe:1"], {
    collectStdout: true,
    signal,
  });
  return (await openFloatWav(Readable.from([wav]))).channels;
}
