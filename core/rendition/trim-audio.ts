/**
 * `POST /v1/trim`: leading and trailing silence removed (about 150 ms kept), judged against the clip's own noise
 * floor. A lossy upload is cut between its own packets, copied as they are: no second generation of lossy coding, and
 * no encode (the largest CPU cost of a pass that re-encoded here). A packet is 20 to 26 ms of audio, well inside the
 * silence kept. wav is cut at the sample, which costs no more. A clip with nothing to trim (all silence, no contrast,
 * under 100 ms to gain at both ends: speech-bounds.ts) is answered unchanged: it is never trimmed to nothing. The
 * answer and the PCM kept for the stages that follow describe the stored bytes, decoded; with `measureOutput`
 * (normalize follows) that decode also measures their loudness, for that normalize, and no decode here makes a waveform.
 */
import { join } from "node:path";
import { acceptedAudioTypes, type AcceptedMimeType } from "../records/accepted-types";
import { fetchBlob, storeContentAddressed } from "./blob-files";
import { decodeAnalysisPcm } from "./analysis-pcm";
import { channelCount } from "./channel-count";
import { typedInput } from "./ffmpeg-input";
import { audioOnly, codecAndFormat, encoderLayoutFilter, encodesOpus, familyEncodings } from "./family-encoding";
import { pcmDurationMs } from "./pcm";
import { probeLoudness } from "./probe-loudness";
import type { RenditionContext, RenditionOutput, RenditionSource } from "./rendition-context";
import { ffmpegRun, sourceKey } from "./rendition-context";
import { FfmpegError, runFfmpeg } from "./run-ffmpeg";
import { speechBounds } from "./speech-bounds";
import { withWorkspace } from "./temp-workspace";

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/**
 * How far a cut's decoded length may be from its bounds' span: a packet (up to 26 ms, 64 ms for 3072-sample AAC) at
 * each end and an encoder's priming (up to 46 ms), well under the 150 ms of silence kept at each end.
 */
const cutToleranceMs = 120;

/** Cut by copying packets: every family but wav, whose "encode" is a copy of samples that can cut at any one. */
export const cutByPackets = (mimeType: AcceptedMimeType): boolean => acceptedAudioTypes[mimeType] !== "wav";

export function trimAudio(context: RenditionContext, source: RenditionSource): Promise<RenditionOutput> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "source");
    const size = await fetchBlob(context.store, sourceKey(source), input);
    // With a normalize to follow, no decode here makes a waveform: normalize's output is what a waveform stage reads,
    // and the decode that measures it makes that one (a normalize that leaves the clip as it is: the stage decodes).
    const waveform = !source.measureOutput;
    const pcm = context.pcm.get(sourceKey(source)) ?? (await decodeAnalysisPcm(context, input, source.mimeType, "decode", waveform));
    context.pcm.set(sourceKey(source), pcm);

    const bounds = speechBounds(pcm);
    if (!bounds) return { cid: source.cid, mimeType: source.mimeType, size, durationMs: pcmDurationMs(pcm) };

    // Output-side -ss/-to: with a copy, the packets from the first that starts at the cut to the last that starts
    // before its end; with an encode, the exact sample (decode and discard), which input seeking does not promise.
    // No cut at an end with nothing to cut: a copy from 0 would drop the packets before it (an encoder's priming,
    // Opus pre-skip), and the decoder would start on speech with its state missing.
    const cut = [
      ...typedInput(input, source.mimeType),
      ...(bounds.startMs > 0 ? ["-ss", seconds(bounds.startMs)] : []),
      ...(bounds.endMs < pcmDurationMs(pcm) ? ["-to", seconds(bounds.endMs)] : []),
      ...audioOnly,
    ];
    const { ext } = familyEncodings[source.mimeType];
    const encode = async () => {
      const file = join(dir, `encoded.${ext}`);
      // libopus takes only its own layout of each count (family-encoding.ts), so an Opus encode needs the count. A
      // stream with no layout of its own (PCM in WebM) stays unguessed: the filter then labels it rather than remixing.
      const layout = encodesOpus(source.mimeType) ? encoderLayoutFilter(source.mimeType, await channelCount(context.ffmpeg, input, acceptedAudioTypes[source.mimeType], context.signal)) : undefined;
      const args = layout ? ["-guess_layout_max", "0", ...cut, "-af", layout] : cut;
      await runFfmpeg(context.ffmpeg, [...args, ...familyEncodings[source.mimeType].args, file], ffmpegRun(context, "trim-encode"));
      return file;
    };
    const copy = async () => {
      const file = join(dir, `copied.${ext}`);
      await runFfmpeg(context.ffmpeg, [...cut, "-c:a", "copy", "-f", codecAndFormat(source.mimeType).format, file], ffmpegRun(context, "trim-copy"));
      return file;
    };
    // A codec the family's muxer will not take as it is (Opus or mp3 in an mp4, found only by trying) is encoded.
    const output = !cutByPackets(source.mimeType)
      ? await encode()
      : await copy().catch((error: unknown) => (error instanceof FfmpegError && !context.signal?.aborted ? encode() : Promise.reject(error)));

    // The stages that follow read these samples (the waveform decodes nothing of its own) and these figures.
    const measured = source.measureOutput ? await probeLoudness(context, output, source.mimeType, { step: "trim:measure", waveform }) : undefined;
    const trimmed = measured?.pcm ?? (await decodeAnalysisPcm(context, output, source.mimeType, "trim:decode"));
    // The bounds are times in the decoded samples, which ffmpeg joins end to end across a gap in the container's
    // timestamps; the cut is made on those timestamps. A clip with such a gap is cut in the wrong place, and keeps
    // less than the bounds span: it is answered unchanged rather than with its speech cut.
    if (Math.abs(pcmDurationMs(trimmed) - (bounds.endMs - bounds.startMs)) > cutToleranceMs) {
      return { cid: source.cid, mimeType: source.mimeType, size, durationMs: pcmDurationMs(pcm) };
    }
    const stored = await storeContentAddressed(context.store, source.appId, output, source.mimeType);
    const key = sourceKey({ appId: source.appId, cid: stored.cid });
    if (measured) context.loudness.set(key, { loudness: measured.loudness, channels: measured.channels, sampleRate: measured.sampleRate });
    context.pcm.set(key, trimmed);
    return { cid: stored.cid, mimeType: source.mimeType, size: stored.size, durationMs: pcmDurationMs(trimmed) };
  });
}
