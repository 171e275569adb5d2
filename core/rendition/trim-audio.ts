/**
 * `POST /v1/trim`: leading and trailing silence removed (about 150 ms kept), judged against the clip's own noise
 * floor, re-encoded in the upload's family. A clip with nothing to trim (all silence, no contrast, sound to the edges)
 * is answered unchanged: it is never trimmed to nothing. With `measureOutput` (normalize follows), the output's
 * loudness is measured while it is written and kept for that normalize.
 */
import { join } from "node:path";
import { fetchBlob, storeContentAddressed } from "./blob-files";
import { decodeAnalysisPcm } from "./analysis-pcm";
import { encodeMeasured, measuredWhileEncoding } from "./encode-measured";
import { audioOnly, familyEncodings } from "./family-encoding";
import { pcmDurationMs, slicePcm } from "./pcm";
import type { RenditionContext, RenditionOutput, RenditionSource } from "./rendition-context";
import { ffmpegRun, sourceKey } from "./rendition-context";
import { runFfmpeg } from "./run-ffmpeg";
import { speechBounds } from "./speech-bounds";
import { withWorkspace } from "./temp-workspace";

const seconds = (ms: number) => (ms / 1000).toFixed(3);

export function trimAudio(context: RenditionContext, source: RenditionSource): Promise<RenditionOutput> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "source");
    const size = await fetchBlob(context.store, sourceKey(source), input);
    const pcm = context.pcm.get(sourceKey(source)) ?? (await decodeAnalysisPcm(context, input));
    context.pcm.set(sourceKey(source), pcm);

    const bounds = speechBounds(pcm);
    if (!bounds) return { cid: source.cid, mimeType: source.mimeType, size, durationMs: pcmDurationMs(pcm) };

    const output = join(dir, `trimmed.${familyEncodings[source.mimeType].ext}`);
    // Output-side -ss/-to cut at the exact sample (decode and discard), which input seeking does not promise. The
    // output is measured as it is written, for the normalize that usually follows (encode-measured.ts).
    // Measured only for a normalize that follows, and never an mp3: that would take a run after the encode (encode-measured.ts).
    const cut = ["-i", input, "-ss", seconds(bounds.startMs), "-to", seconds(bounds.endMs)];
    const step = "trim-encode";
    const measured = source.measureOutput && measuredWhileEncoding(source.mimeType)
      ? await encodeMeasured(context, { input: cut, mimeType: source.mimeType, file: output, step })
      : void (await runFfmpeg(context.ffmpeg, [...cut, ...audioOnly, ...familyEncodings[source.mimeType].args, output], ffmpegRun(context, step)));
    const stored = await storeContentAddressed(context.store, source.appId, output, source.mimeType);
    if (measured) context.loudness.set(sourceKey({ appId: source.appId, cid: stored.cid }), { loudness: measured.loudness, channels: measured.channels, sampleRate: measured.sampleRate });
    // The trimmed clip's analysis PCM is a slice of the source's: the waveform that follows needs no decode.
    context.pcm.set(sourceKey({ appId: source.appId, cid: stored.cid }), slicePcm(pcm, bounds.startMs, bounds.endMs));
    return { cid: stored.cid, mimeType: source.mimeType, size: stored.size, durationMs: bounds.endMs - bounds.startMs };
  });
}
