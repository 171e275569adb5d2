/** The analysis PCM of a blob: from the cache when a recent operation decoded it (or made it), else one decode. */
import { join } from "node:path";
import { fetchBlob } from "./blob-files";
import { analysisPcmOutput, type Pcm, pcmFromBytes } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionSource, sourceKey } from "./rendition-context";
import { runFfmpeg } from "./run-ffmpeg";

export async function decodeAnalysisPcm(context: RenditionContext, file: string, step = "decode"): Promise<Pcm> {
  return pcmFromBytes(await runFfmpeg(context.ffmpeg, ["-i", file, ...analysisPcmOutput], { ...ffmpegRun(context, step), collectStdout: true }));
}

/** `dir` is the operation's workspace; the source is fetched into it only on a cache miss. */
export async function analysisPcm(context: RenditionContext, source: RenditionSource, dir: string): Promise<Pcm> {
  const key = sourceKey(source);
  const cached = context.pcm.get(key);
  if (cached) return cached;
  const file = join(dir, "source");
  await fetchBlob(context.store, key, file);
  const pcm = await decodeAnalysisPcm(context, file);
  context.pcm.set(key, pcm);
  return pcm;
}
