/**
 * `POST /v1/normalize`: the clip brought to its loudness target (loudness-target.ts), re-encoded in the upload's
 * family with its channel count and rate. Two passes: measure, then one linear gain; where that gain would lift true
 * peaks over the ceiling, a limiter at 4× the clip's rate holds them. ffmpeg's loudnorm is not used: in that case it
 * falls back to dynamic normalization without saying so. The stored output is measured again, as delivered, while it
 * is encoded (encode-measured.ts); one that misses the target (the limiter took loudness, the encoder overshot) is
 * made again with the measured error taken off. When no attempt meets the target the request fails: an off-target
 * variant is never stored as ready. A clip with no gated loudness (silence), or already on target, is answered
 * unchanged. The source's figures come from the trim that wrote it when that was this process, just before.
 * The same decode that measures the output writes its mp3 rendition, stored with it: normalize is the last stage that
 * changes the bytes, and the first playback then finds the rendition made.
 */
import { join } from "node:path";
import type { Loudness, LoudnessFigures } from "../records/loudness";
import { renditionKey } from "../blobs/blob-key";
import { fetchBlob, storeAt, storeContentAddressed } from "./blob-files";
import { encodeMeasured, measuredWhileEncoding } from "./encode-measured";
import { audioOnly, encoderLayoutFilter, familyEncodings, mp3Rendition } from "./family-encoding";
import { typedInput } from "./ffmpeg-input";
import { limiterCeilingDbtp, loudnessAimLu, meetsTarget, targetLufs, truePeakLimitDbtp } from "./loudness-target";
import { pcmDurationMs } from "./pcm";
import { type LoudnessProbe, probeLoudness } from "./probe-loudness";
import { type RenditionContext, type RenditionOutput, type RenditionSource, sourceKey } from "./rendition-context";
import { FfmpegError } from "./run-ffmpeg";
import { withWorkspace } from "./temp-workspace";

export interface NormalizedOutput extends RenditionOutput {
  loudness: Loudness;
}

interface GainPlan {
  gainDb: number;
  ceilingDbtp: number;
}

interface Attempt {
  plan: GainPlan;
  file: string;
  probe: LoudnessProbe;
  /** The mp3 rendition of `file`, made from the decode that measured it (none for an mp3 upload: it is its own). */
  mp3?: string;
}

// A clip that needs no limiter is done in one encode. One whose limiter takes most of each step (clicks lifted 40 dB),
// or whose encoder overshoots the ceiling by dBs (six channels of Opus at 64 kbit/s), has taken up to seven.
const maxAttempts = 8;
const oversampling = 4;

/** The true peak the plan's output reaches before encoding: the gained peak, or the limiter's ceiling. */
const plannedPeak = (plan: GainPlan, before: LoudnessFigures) => Math.min(before.truePeakDbtp! + plan.gainDb, plan.ceilingDbtp);

function gainFilter(plan: GainPlan, before: LoudnessFigures, sampleRate: number): string {
  const volume = `volume=${plan.gainDb.toFixed(2)}dB`;
  if (before.truePeakDbtp! + plan.gainDb <= plan.ceilingDbtp) return volume;
  // A 5 ms look-ahead and 50 ms release hold transients without pumping speech; level=false: no make-up gain.
  const limit = (10 ** (plan.ceilingDbtp / 20)).toFixed(5);
  const limiter = `alimiter=limit=${limit}:attack=5:release=50:level=false`;
  return `${volume},aresample=${sampleRate * oversampling},${limiter},aresample=${sampleRate}`;
}

/** Largest change of gain from one attempt to the next: a limiter that takes most of a step makes a slope look flat. */
const maxStepDb = 24;

/**
 * The next plan after the latest attempt (`attempts[0]`) missed: its true-peak overshoot taken off the ceiling, and
 * its loudness error off the gain. Loudness rises with gain, but where the limiter takes loudness (clicks that
 * carried it) a dB of gain gives less than a dB of loudness, and less the harder it limits. So once the target is
 * bracketed (a gain fell short, a higher one overshot), the next gain is interpolated between the closest of each,
 * kept to the middle half of that bracket so it always narrows; until then the step follows the slope of the last
 * two attempts at one ceiling, at most 24 dB, and never back past a gain known to fall short.
 * Ceilings only go down, and a lower one only takes loudness away: a gain that fell short still does, but one that
 * overshot still bounds the bracket only if the new ceiling would not have limited it more (its planned peak is under).
 */
function nextPlan(attempts: readonly Attempt[], before: LoudnessFigures, target: number): GainPlan {
  const last = attempts[0]!;
  let { gainDb, ceilingDbtp } = last.plan;
  const { integratedLufs, truePeakDbtp } = last.probe.loudness;
  if (truePeakDbtp !== null && truePeakDbtp > truePeakLimitDbtp) {
    ceilingDbtp = plannedPeak(last.plan, before) - (truePeakDbtp - truePeakLimitDbtp) - 0.2;
  }
  if (integratedLufs === null) return { gainDb, ceilingDbtp };
  const measured = attempts.filter((a) => a.probe.loudness.integratedLufs !== null);
  const lufs = (a: Attempt) => a.probe.loudness.integratedLufs!;
  const short = measured.filter((a) => lufs(a) < target).sort((a, b) => b.plan.gainDb - a.plan.gainDb)[0];
  const over = measured
    .filter((a) => lufs(a) > target && plannedPeak(a.plan, before) <= ceilingDbtp)
    .sort((a, b) => a.plan.gainDb - b.plan.gainDb)[0];
  if (short && over && over.plan.gainDb > short.plan.gainDb) {
    const low = short.plan.gainDb;
    const width = over.plan.gainDb - low;
    const interpolated = low + ((target - lufs(short)) / (lufs(over) - lufs(short))) * width;
    return { gainDb: Math.min(Math.max(interpolated, low + width / 4), low + (3 * width) / 4), ceilingDbtp };
  }
  const previous = measured.find((a) => a !== last && a.plan.ceilingDbtp === last.plan.ceilingDbtp);
  const step = previous ? last.plan.gainDb - previous.plan.gainDb : 0;
  const slope = previous && step !== 0 ? (integratedLufs - lufs(previous)) / step : 1;
  const change = (target - integratedLufs) / Math.min(1, Math.max(0.2, slope));
  const next = gainDb + Math.max(-maxStepDb, Math.min(maxStepDb, change));
  // An overshoot the lower ceiling voided can still point below a gain that fell short: halfway back instead.
  return { gainDb: short && next <= short.plan.gainDb ? (short.plan.gainDb + gainDb) / 2 : next, ceilingDbtp };
}

/** Of two attempts, the one to keep: meeting the true-peak limit first, then nearer the loudness target. */
function better(a: Attempt, b: Attempt, target: number): Attempt {
  const over = (x: Attempt) => Math.max(0, (x.probe.loudness.truePeakDbtp ?? -Infinity) - truePeakLimitDbtp);
  if (over(a) !== over(b)) return over(a) < over(b) ? a : b;
  const miss = (x: Attempt) => Math.abs((x.probe.loudness.integratedLufs ?? -Infinity) - target);
  return miss(a) <= miss(b) ? a : b;
}

/** No attempt met the target. An FfmpegError: the service answers 502, as for any failed processing, and the pass
 * settles the stage failed rather than serve an off-target variant as ready. */
export class LoudnessTargetMissedError extends FfmpegError {}

const figures = (a: Attempt) => `${a.probe.loudness.integratedLufs} LUFS, ${a.probe.loudness.truePeakDbtp} dBTP`;

export function normalizeAudio(context: RenditionContext, source: RenditionSource): Promise<NormalizedOutput> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "source");
    const size = await fetchBlob(context.store, sourceKey(source), input);
    const known = context.loudness.get(sourceKey(source));
    const knownPcm = context.pcm.get(sourceKey(source));
    const probe = known && knownPcm ? { ...known, pcm: knownPcm } : await probeLoudness(context, input, source.mimeType);
    context.pcm.set(sourceKey(source), probe.pcm);
    const before = probe.loudness;
    if (meetsTarget(before, probe.channels)) {
      return { cid: source.cid, mimeType: source.mimeType, size, durationMs: pcmDurationMs(probe.pcm), loudness: { ...before, before } };
    }

    const target = targetLufs(probe.channels);
    const encoding = familyEncodings[source.mimeType];
    const attempts: Attempt[] = [];
    // With no gated loudness (a clip under 400 ms) only its peaks are over: no gain, the limiter holds them.
    let plan: GainPlan = { gainDb: before.integratedLufs === null ? 0 : target - before.integratedLufs, ceilingDbtp: limiterCeilingDbtp(source.mimeType) };
    for (;;) {
      const file = join(dir, `normalized-${attempts.length}.${encoding.ext}`);
      const mp3 = measuredWhileEncoding(source.mimeType) ? join(dir, `rendition-${attempts.length}.${mp3Rendition.ext}`) : undefined;
      const filter = [gainFilter(plan, before, probe.sampleRate), encoderLayoutFilter(source.mimeType, probe.channels)].filter(Boolean).join(",");
      const alsoOutputs = mp3 ? [...audioOnly, ...mp3Rendition.args, mp3] : [];
      const measured = await encodeMeasured(context, { input: [...typedInput(input, source.mimeType), "-af", filter], mimeType: source.mimeType, file, step: "gain-encode", alsoOutputs });
      const attempt = { plan, file, probe: measured, mp3 };
      attempts.unshift(attempt);
      if (meetsTarget(attempt.probe.loudness, probe.channels, loudnessAimLu) || attempts.length === maxAttempts) break;
      plan = nextPlan(attempts, before, target);
    }
    const made = attempts.reduce((a, b) => better(a, b, target));
    if (!meetsTarget(made.probe.loudness, probe.channels)) {
      const tried = attempts.map((a) => `gain ${a.plan.gainDb.toFixed(2)} dB, ceiling ${a.plan.ceilingDbtp.toFixed(2)} dBTP: ${figures(a)}`);
      const message = `normalize missed its target (${target} LUFS ±1 LU, at most ${truePeakLimitDbtp} dBTP): the closest of ${attempts.length} attempts measured ${figures(made)}`;
      throw new LoudnessTargetMissedError(message, tried.reverse().join("\n"));
    }

    const stored = await storeContentAddressed(context.store, source.appId, made.file, source.mimeType);
    if (made.mp3) {
      const key = renditionKey(sourceKey({ appId: source.appId, cid: stored.cid }), "mp3");
      context.renditions.set(key, await storeAt(context.store, key, made.mp3, "audio/mpeg"));
    }
    context.pcm.set(sourceKey({ appId: source.appId, cid: stored.cid }), made.probe.pcm);
    return {
      cid: stored.cid,
      mimeType: source.mimeType,
      size: stored.size,
      durationMs: pcmDurationMs(made.probe.pcm),
      loudness: { ...made.probe.loudness, before },
    };
  });
}
