/**
 * One decode of a file that measures it as ITU-R BS.1770 / EBU R128 do (ffmpeg's ebur128 with 4× oversampled true
 * peak; a mono file is measured as one channel), tells its channel count and rate, and writes its analysis PCM and
 * (unless told not to) its waveform.
 */
import type { Readable } from "node:stream";
import { acceptedAudioTypes, type AcceptedMimeType, type AudioFamily } from "../records/accepted-types";
import { ffmpegInput, typedInput } from "./ffmpeg-input";
import { type AnalysisPcm, analysisOutputs, pcmDurationMs } from "./pcm";
import { type LoudnessReport, parseLoudnessReport } from "./loudness-report";
import { ffmpegRun, type RenditionContext } from "./rendition-context";
import { FfmpegError, runFfmpegWithLog } from "./run-ffmpeg";

export interface LoudnessProbe extends LoudnessReport {
  pcm: AnalysisPcm;
}

// framelog=verbose keeps ebur128's per-frame lines out of the info log; ashowinfo of the first sample names the
// channel count and rate (the static ffmpeg ships without ffprobe).
/**
 * EBU Tech 3342 takes the loudness range from 3 s windows, so a shorter clip has none; ebur128 answers 20 LU from
 * partial windows up to about 3.3 s, so its figure is kept only from 3.5 s on.
 */
const shortestRangeMs = 3500;

/**
 * The container a streamed copy of the family's packets travels in (encode-measured.ts): Matroska carries every
 * family's packets, but not the channel layout of PCM, which then reads back as ffmpeg's default for its count (3.0
 * as 2.1, its centre weighed as LFE, that is not at all; quad as 4.0), and BS.1770 weighs channels by position. A WAV
 * stream carries its layout in its header, and reads from a pipe to its end without the sizes a pipe cannot go back for.
 */
export const streamedCopy = (mimeType: AcceptedMimeType): { family: AudioFamily; muxer: string } =>
  acceptedAudioTypes[mimeType] === "wav" ? { family: "wav", muxer: "wav" } : { family: "webm", muxer: "matroska" };

const graph =
  "[0:a:0]asplit[meter][info];[meter]ebur128=peak=true:framelog=verbose,anullsink;[info]atrim=end_sample=1,ashowinfo,anullsink";

export interface ProbeOptions {
  /** The timing step (default `measure`). */
  step?: string;
  /** Further ffmpeg outputs written from the same decode (the mp3 rendition beside normalize). */
  alsoOutputs?: string[];
  /** False: no waveform (pcm.ts), for a decode whose waveform a later one supersedes. */
  waveform?: boolean;
}

/**
 * `input` is a file of audio of `mimeType`, or a stream of encoded audio (another ffmpeg's streamed copy of what it
 * writes, in the container `streamedCopy` names: encode-measured.ts).
 */
export async function probeLoudness(
  context: Pick<RenditionContext, "ffmpeg" | "signal" | "timings">,
  input: string | Readable,
  mimeType: AcceptedMimeType,
  { step = "measure", alsoOutputs = [], waveform = true }: ProbeOptions = {},
): Promise<LoudnessProbe> {
  const streamed = typeof input !== "string";
  const outputs = analysisOutputs(waveform);
  const args = [...(streamed ? ffmpegInput("pipe:0", streamedCopy(mimeType).family) : typedInput(input, mimeType)), "-filter_complex", graph, ...outputs.args, ...alsoOutputs];
  const { stdout, stderr } = await runFfmpegWithLog(context.ffmpeg, args, {
    ...ffmpegRun(context, step),
    ...(streamed && { stdin: input }),
    collectStdout: true,
    onPipe3: outputs.onPipe3,
    logLevel: "info",
  });
  const report = parseLoudnessReport(stderr);
  if (!report) throw new FfmpegError("ffmpeg printed no loudness report", stderr.slice(-2000));
  const pcm = outputs.read(stdout);
  if (pcmDurationMs(pcm) < shortestRangeMs) report.loudness.rangeLu = null;
  return { ...report, pcm };
}
