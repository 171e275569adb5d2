/**
 * One decode of a file that measures it as ITU-R BS.1770 / EBU R128 do (ffmpeg's ebur128 with 4× oversampled true
 * peak; a mono file is measured as one channel), tells its channel count and rate, and writes its analysis PCM.
 */
import { analysisPcmOutput, type Pcm, pcmDurationMs, pcmFromBytes } from "./pcm";
import { type LoudnessReport, parseLoudnessReport } from "./loudness-report";
import { ffmpegRun, type RenditionContext } from "./rendition-context";
import { FfmpegError, runFfmpegWithLog } from "./run-ffmpeg";

export interface LoudnessProbe extends LoudnessReport {
  pcm: Pcm;
}

// framelog=verbose keeps ebur128's per-frame lines out of the info log; ashowinfo of the first sample names the
// channel count and rate (the static ffmpeg ships without ffprobe).
/**
 * EBU Tech 3342 takes the loudness range from 3 s windows, so a shorter clip has none; ebur128 answers 20 LU from
 * partial windows up to about 3.3 s, so its figure is kept only from 3.5 s on.
 */
const shortestRangeMs = 3500;

const graph =
  "[0:a:0]asplit[meter][info];[meter]ebur128=peak=true:framelog=verbose,anullsink;[info]atrim=end_sample=1,ashowinfo,anullsink";

export async function probeLoudness(context: Pick<RenditionContext, "ffmpeg" | "signal" | "timings">, file: string, step = "measure"): Promise<LoudnessProbe> {
  const { stdout, stderr } = await runFfmpegWithLog(context.ffmpeg, ["-i", file, "-filter_complex", graph, ...analysisPcmOutput], {
    ...ffmpegRun(context, step),
    collectStdout: true,
    logLevel: "info",
  });
  const report = parseLoudnessReport(stderr);
  if (!report) throw new FfmpegError("ffmpeg printed no loudness report", stderr.slice(-2000));
  const pcm = pcmFromBytes(stdout);
  if (pcmDurationMs(pcm) < shortestRangeMs) report.loudness.rangeLu = null;
  return { ...report, pcm };
}
