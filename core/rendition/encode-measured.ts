/**
 * An encode in the upload's family whose output is measured as stored (probe-loudness.ts) while it is being written:
 * ffmpeg's tee muxer writes the file and streams the same packets, in Matroska (WAV for WAV, whose channel layout
 * Matroska drops: probe-loudness.ts), to a second ffmpeg that decodes and measures them (and may write more from that
 * decode: the mp3 rendition). The two run on two cores at once instead of one after the other. The stream carries
 * the packets of every family so that they decode to exactly the stored file's samples, except mp3: an mp3 file's
 * LAME header trims the encoder's delay and padding, which a stream cannot carry.
 * An mp3 output is therefore measured from the stored file once it is written. So is any output while this process's
 * other ffmpeg runs already fill the cores (several posts at once): a second run at once gains no time then, and the
 * switching between more runs than cores costs CPU that the busy machine does not have.
 */
import { availableParallelism } from "node:os";
import { PassThrough } from "node:stream";
import { acceptedAudioTypes, type AcceptedMimeType } from "../records/accepted-types";
import { audioOnly, codecAndFormat, familyEncodings } from "./family-encoding";
import { type LoudnessProbe, probeLoudness, streamedCopy } from "./probe-loudness";
import { ffmpegRun, type RenditionContext } from "./rendition-context";
import { ffmpegRunsInFlight, runFfmpeg } from "./run-ffmpeg";

export interface MeasuredEncode {
  /** ffmpeg arguments before the output: the input and any cut or filter. */
  input: string[];
  mimeType: AcceptedMimeType;
  /** The output file, in the family's encoding. */
  file: string;
  /** The timing step: `<step>+measure` for the pair run together (one entry, so a request's steps still add up to
   * at most its time), else `<step>` and `<step>:measure` one after the other. */
  step: string;
  /** Further outputs of the measuring decode (ffmpeg output arguments). */
  alsoOutputs?: string[];
}

/** Whether the two runs of a measured encode each have a core, beside this process's other ffmpeg runs. */
export const coresFreeForBoth = (): boolean => ffmpegRunsInFlight() + 2 <= availableParallelism();

/** Whether a streamed copy of the family's packets decodes to exactly the samples of its stored file. */
export const measuredWhileEncoding = (mimeType: AcceptedMimeType): boolean => acceptedAudioTypes[mimeType] !== "mp3";

/** Runs the encode and answers the measurement of what it wrote, as a later probe of the file would. */
export async function encodeMeasured(context: RenditionContext, encode: MeasuredEncode): Promise<LoudnessProbe> {
  const { args } = familyEncodings[encode.mimeType];
  // One after the other for an mp3, with the cores taken, or for a path the tee muxer's syntax would misread (an odd TMPDIR).
  if (!measuredWhileEncoding(encode.mimeType) || /[[\]|\\]/.test(encode.file) || !coresFreeForBoth()) {
    await runFfmpeg(context.ffmpeg, [...encode.input, ...audioOnly, ...args, encode.file], ffmpegRun(context, encode.step));
    return probeLoudness(context, encode.file, encode.mimeType, { step: `${encode.step}:measure`, alsoOutputs: encode.alsoOutputs });
  }
  const { codec, format } = codecAndFormat(encode.mimeType);
  const packets = new PassThrough();
  // Either run failing ends both: a measurer that stopped reading would otherwise leave the encoder blocked on its pipe.
  const stop = new AbortController();
  const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal;
  const started = performance.now();
  const untimed = { ...context, signal, timings: undefined };
  const encoding = runFfmpeg(context.ffmpeg, [...encode.input, ...audioOnly, ...codec, "-f", "tee", `[f=${format}]${encode.file}|[f=${streamedCopy(encode.mimeType).muxer}]pipe:1`], {
    ...ffmpegRun(untimed, encode.step),
    stdoutTo: packets,
  });
  const measuring = probeLoudness(untimed, packets, encode.mimeType, { step: `${encode.step}:measure`, alsoOutputs: encode.alsoOutputs });
  const failed = (error: unknown) => {
    stop.abort();
    packets.destroy();
    throw error;
  };
  const [, probe] = await Promise.all([encoding.catch(failed), measuring.catch(failed)]);
  context.timings?.push({ step: `${encode.step}+measure`, ms: Math.round(performance.now() - started) });
  return probe;
}
