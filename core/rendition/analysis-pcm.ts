/** The analysis PCM of a blob, with its waveform: from the cache when a recent operation decoded it (or made it), else one decode. */
import { join } from "node:path";
import type { AcceptedMimeType } from "../records/accepted-types";
import { fetchBlob } from "./blob-files";
import { typedInput } from "./ffmpeg-input";
import type { Waveform } from "../records/stage-outputs";
import { type AnalysisPcm, analysisOutputs, hasWaveform } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionSource, sourceKey } from "./rendition-context";
import { runFfmpeg } from "./run-ffmpeg";

/** One decode of `file`; with `waveform` false it makes no waveform (pcm.ts). */
export async function decodeAnalysisPcm(context: RenditionContext, file: string, mimeType: AcceptedMimeType, step = "decode", waveform = true): Promise<AnalysisPcm> {
  const outputs = analysisOutputs(waveform);
  return outputs.read(await runFfmpeg(context.ffmpeg, [...typedInput(file, mimeType), ...outputs.args], { ...ffmpegRun(context, step), collectStdout: true, onPipe3: outputs.onPipe3 }));
}

/**
 * `dir` is the operation's workspace; the source is fetched into it only when the cache has no decode of it with its
 * waveform (none, or one that made no waveform).
 */
export async function analysisPcm(context: RenditionContext, source: RenditionSource, dir: string): Promise<AnalysisPcm & { waveform: Waveform }> {
  const key = sourceKey(source);
  const cached = context.pcm.get(key);
  if (hasWaveform(cached)) return cached;
  const file = join(dir, "source");
  await fetchBlob(context.store, key, file);
  const pcm = await decodeAnalysisPcm(context, file, source.mimeType);
  context.pcm.set(key, pcm);
  if (!hasWaveform(pcm)) throw new Error("a decode asked for its waveform made none");
  return pcm;
}
