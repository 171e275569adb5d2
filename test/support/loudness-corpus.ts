/**
 * The normalize stage's test corpus: short clips generated deterministically with ffmpeg's aevalsrc (expressions of
 * time, the sample index and a seeded generator) at levels from very quiet to clipped, mono, stereo and 5.1, encoded in
 * every accepted family with the family's own encoder. Each is a few seconds so the whole corpus runs in seconds.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AcceptedMimeType } from "../../core/records/accepted-types";
import { familyEncodings } from "../../core/rendition/family-encoding";
import { ffmpeg } from "./rendition-fixtures";

const run = promisify(execFile);

/** Syllables: a buzz at a gliding pitch with five harmonics, 2.5 syllables a second, a pause every 1.5 s. */
const speech =
  "(sin(2*PI*(120+20*sin(2*PI*0.7*t))*t)+0.6*sin(4*PI*(120+20*sin(2*PI*0.7*t))*t)+0.4*sin(6*PI*(120+20*sin(2*PI*0.7*t))*t)+0.25*sin(10*PI*(120+20*sin(2*PI*0.7*t))*t)+0.15*sin(16*PI*(120+20*sin(2*PI*0.7*t))*t))*pow(sin(2*PI*2.5*t),2)*gt(mod(t,1.5),0.3)*0.35";
/** Plosives: a decaying 70 Hz thump every 0.75 s; clicks: a single sample near full scale every ~0.4 s. */
const plosives = "0.7*sin(2*PI*70*t)*exp(-45*mod(t,0.75))";
const clicks = "0.97*eq(mod(n,19001),7)-0.9*eq(mod(n,19001),8)";
/** A 0.5 ms click near full scale at the start of every second: the limiter takes most of the gain given to it. */
const secondClicks = "0.95*lt(mod(t,1),0.0005)";
/** White hiss: ffmpeg's expression random() is a generator seeded with 0, so the same on every run. */
const hiss = "(2*random(0)-1)";
/** An A major chord with a slow tremolo, and a hiss burst on every beat (the drum). */
const chord = (detune: number) =>
  `(0.3*sin(2*PI*${220 * detune}*t)+0.25*sin(2*PI*${277.18 * detune}*t)+0.2*sin(2*PI*${329.63 * detune}*t))*(0.75+0.25*sin(2*PI*4*t))+0.35*${hiss}*exp(-25*mod(t,0.5))`;

export interface CorpusClip {
  name: string;
  mimeType: AcceptedMimeType;
  channels: 1 | 2 | 6;
  sampleRate: number;
  /** One aevalsrc expression per channel; the first repeats for channels not given. */
  exprs: string[];
  /** Gain after generation, dB (before encoding). */
  gainDb: number;
  seconds?: number;
}

const clip = (name: string, mimeType: AcceptedMimeType, channels: 1 | 2 | 6, exprs: string[], gainDb: number, sampleRate = 48000): CorpusClip => ({
  name,
  mimeType,
  channels,
  sampleRate,
  exprs,
  gainDb,
});

export const loudnessCorpus: CorpusClip[] = [
  clip("very quiet speech, mono wav", "audio/wav", 1, [speech], -36),
  clip("very quiet speech, stereo mp3", "audio/mpeg", 2, [speech, speech], -34, 44100),
  clip("very quiet music, stereo m4a", "audio/m4a", 2, [chord(1), chord(1.003)], -38, 44100),
  clip("speech with clicks and plosives, mono wav", "audio/wav", 1, [`${speech}*0.5+${plosives}+${clicks}`], -6),
  clip("speech with clicks and plosives, stereo webm", "audio/webm", 2, [`${speech}*0.5+${plosives}+${clicks}`, `${speech}*0.45+${plosives}`], -4),
  clip("speech with clicks and plosives, mono ogg", "audio/ogg", 1, [`${speech}*0.5+${plosives}+${clicks}`], -2),
  clip("speech with clicks, mono mp3", "audio/mpeg", 1, [`${speech}*0.3+${clicks}`], 0, 44100),
  clip("quiet speech with clicks, mono mp4", "audio/mp4", 1, [`${speech}*0.3+${clicks}`], -18),
  clip("whisper with full-scale clicks and loud plosives, mono wav", "audio/wav", 1, [`${speech}*0.01+${plosives}*1.4+${clicks}`], 0),
  clip("whisper with full-scale clicks, stereo m4a", "audio/m4a", 2, [`${speech}*0.005+${clicks}`, `${speech}*0.005`], 0),
  { ...clip("whisper under a click each second, mono wav", "audio/wav", 1, [`${speech}*0.01+${secondClicks}`], 0), seconds: 8 },
  { ...clip("speech bursts under a click each second, mono wav", "audio/wav", 1, [`${speech}*0.03*gt(mod(t,2),1.5)+${secondClicks}`], 0), seconds: 8 },
  clip("near full scale speech, stereo wav", "audio/wav", 2, [speech, `${speech}*0.9`], 8),
  clip("near full scale speech, mono m4a", "audio/m4a", 1, [speech], 8),
  // A tone at a quarter of the rate with its samples at ±45°: inter-sample peaks 3 dB over the sample peak.
  clip("near full scale quarter-rate tone, stereo wav", "audio/wav", 2, ["0.99*sin(2*PI*11025*t+PI/4)"], 0, 44100),
  clip("near full scale quarter-rate tone, stereo x-m4a", "audio/x-m4a", 2, ["0.99*sin(2*PI*12000*t+PI/4)"], 0),
  clip("clipped speech, mono wav", "audio/wav", 1, [`clip(4*${speech},-1,1)`], 0),
  clip("clipped music, stereo mp3", "audio/mpeg", 2, [`clip(3*${chord(1)},-1,1)`, `clip(3*${chord(1.002)},-1,1)`], 0, 44100),
  clip("clipped speech, stereo ogg", "audio/ogg", 2, [`clip(4*${speech},-1,1)`], 0),
  clip("noisy speech, mono webm", "audio/webm", 1, [`${speech}+0.08*${hiss}`], -10),
  clip("noisy speech, stereo m4a", "audio/m4a", 2, [`${speech}+0.1*${hiss}`, `${speech}+0.1*${hiss}`], -14, 44100),
  clip("hiss only, mono wav", "audio/wav", 1, [`0.3*${hiss}`], -20),
  clip("music, stereo wav", "audio/wav", 2, [chord(1), chord(1.003)], -3, 44100),
  clip("music, stereo webm", "audio/webm", 2, [chord(1), chord(1.003)], 0),
  clip("music, mono mp4", "audio/mp4", 1, [chord(1)], -12),
  clip("speech, 5.1 wav", "audio/wav", 6, [speech, speech, speech, "0", `${speech}*0.5`, `${speech}*0.5`], -10),
  clip("speech at 16 kHz, mono mp3", "audio/mpeg", 1, [speech], -20, 16000),
  clip("speech at 22.05 kHz, mono wav", "audio/wav", 1, [`${speech}+${clicks}`], -12, 22050),
];

const layouts = { 1: "mono", 2: "stereo", 6: "5.1" } as const;

/** Generates and encodes one clip in its family (4 s unless it says otherwise). */
export async function makeCorpusClip(corpusClip: CorpusClip): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "loudness-corpus-"));
  try {
    const { channels, sampleRate, exprs, gainDb, seconds = 4 } = corpusClip;
    const all = Array.from({ length: channels }, (_, i) => exprs[i] ?? exprs[0]!);
    // Commas inside a filter's option value are escaped for the filtergraph parser.
    const source = `aevalsrc=exprs='${all.join("|").replaceAll(",", "\\,")}':c=${layouts[channels]}:s=${sampleRate}:d=${seconds},volume=${gainDb}dB`;
    const encoding = familyEncodings[corpusClip.mimeType];
    const out = join(dir, `clip.${encoding.ext}`);
    // bitexact: the ogg muxer's stream serial is otherwise random.
    await run(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, "-fflags", "+bitexact", ...encoding.args, out]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
