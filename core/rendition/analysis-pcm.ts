/** The analysis PCM of a blob, with its waveform: from the cache when a recent operation decoded it (or made it), else one decode. */
import { join } from "node:path";
import type { AcceptedMimeType } from "../records/accepted-types";
import { fetchBlob } from "./blob-files";
import { typedInput } from "./ffmpeg-input";
import { type AnalysisPcm, analysisOutputs } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionSource, sourceKey } from "./rendition-context";
import { runFfmpeg } from "./run-ffmpeg";

export async function decodeAnalysisPcm(context: RenditionContext, file: string, mimeType: AcceptedMimeType, step = "decode"): Promise<AnalysisPcm> {
  const outputs = analysisOutputs();
  return outputs.read(await runFfmpeg(context.ffmpeg, [...typedInput(file, mimeType), ...outputs.args], { ...ffmpegRun(context, step), collectStdout: true, onPipe3: outputs.onPipe3 }));
}

/** `dir` is the operation's workspace; the source is fetched into it only on a cache miss. */
export async function analysisPcm(context: RenditionContext, source: RenditionSource, dir: string): Promise<AnalysisPcm> {
  const key = sourceKey(source);
  const cached = context.pcm.get(key);
  if (cached) return cached;
  const file = join(dir, "source");
  await fetchBlob(context.store, key, file);
  const pcm = await decodeAnalysisPcm(context, file, source.mimeType);
  context.pcm.set(key, pcm);
  return pcm;
}
