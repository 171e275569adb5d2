/**
 * `POST /v1/render`: the mp3 rendition of a blob, stored at its rendition path (`renditions/<appId>/<cid>.mp3`).
 * An mp3 upload is its own rendition (copied, not re-encoded). The same ffmpeg run also writes the analysis PCM and the waveform when
 * no earlier operation left it in the cache, so the duration and a later waveform cost no second decode. A rendition
 * this process already stored (normalize makes its output's beside it) is answered as it is, when the duration is known.
 */
import { join } from "node:path";
import { renditionKey } from "../blobs/blob-key";
import { fetchBlob, storeAt } from "./blob-files";
import { audioOnly, mp3Rendition } from "./family-encoding";
import { typedInput } from "./ffmpeg-input";
import { analysisOutputs, pcmDurationMs } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionOutput, type RenditionSource, sourceKey } from "./rendition-context";
import { runFfmpeg } from "./run-ffmpeg";
import { withWorkspace } from "./temp-workspace";

export function renderMp3(context: RenditionContext, source: RenditionSource): Promise<RenditionOutput> {
  return withWorkspace(async (dir) => {
    const key = sourceKey(source);
    let pcm = context.pcm.get(key);
    // Stored by this process, which knows its CID and size: the store is only asked whether it is still there.
    const made = pcm && context.renditions.get(renditionKey(key, "mp3"));
    if (made && (await context.store.stat(renditionKey(key, "mp3")))) {
      return { cid: made.cid, mimeType: "audio/mpeg", size: made.size, durationMs: pcmDurationMs(pcm!) };
    }
    const input = join(dir, "source");
    await fetchBlob(context.store, key, input);
    const output = source.mimeType === "audio/mpeg" ? input : join(dir, `rendition.${mp3Rendition.ext}`);
    const args: string[] = [];
    if (output !== input) args.push(...audioOnly, ...mp3Rendition.args, output);
    const analysis = pcm ? undefined : analysisOutputs();
    if (analysis) args.push(...analysis.args);
    if (args.length > 0) {
      const step = pcm ? "mp3-encode" : "mp3-encode+decode";
      const stdout = await runFfmpeg(context.ffmpeg, [...typedInput(input, source.mimeType), ...args], { ...ffmpegRun(context, step), collectStdout: !pcm, onPipe3: analysis?.onPipe3 });
      if (analysis) context.pcm.set(key, (pcm = analysis.read(stdout)));
    }
    const stored = await storeAt(context.store, renditionKey(key, "mp3"), output, "audio/mpeg");
    return { cid: stored.cid, mimeType: "audio/mpeg", size: stored.size, durationMs: pcmDurationMs(pcm!) };
  });
}
