/**
 * How a processed variant is encoded so it stays in the upload's family (docs/decisions.md#processing): same MIME type,
 * re-encoded with a codec that family's sniffing accepts. Settings favour speed at speech quality.
 */
import type { AcceptedMimeType } from "../records/accepted-types";

export interface Encoding {
  /** ffmpeg output arguments, before the output path. */
  args: string[];
  ext: string;
}

// Opus at complexity 3: half the CPU of the default 10 (0.44 s against 0.84 s for 56 s), no audible loss for speech at 64 kbit/s.
const opus = ["-c:a", "libopus", "-b:a", "64k", "-compression_level", "3"];
const aac = ["-c:a", "aac", "-b:a", "128k"];

export const familyEncodings: Record<AcceptedMimeType, Encoding> = {
  "audio/wav": { args: ["-c:a", "pcm_s16le", "-f", "wav"], ext: "wav" },
  "audio/mpeg": { args: ["-c:a", "libmp3lame", "-q:a", "4", "-f", "mp3"], ext: "mp3" },
  "audio/ogg": { args: [...opus, "-f", "ogg"], ext: "ogg" },
  "audio/webm": { args: [...opus, "-f", "webm"], ext: "webm" },
  // The ipod muxer writes the `M4A ` brand that audio/m4a names; audio/mp4 gets the plain mp4 muxer.
  "audio/m4a": { args: [...aac, "-f", "ipod"], ext: "m4a" },
  "audio/x-m4a": { args: [...aac, "-f", "ipod"], ext: "m4a" },
  "audio/mp4": { args: [...aac, "-f", "mp4"], ext: "mp4" },
};

/**
 * libopus (no mapping family given) takes only the Vorbis layout of each channel count from 1 to 8, and refuses the
 * ones ffmpeg's FLAC decoder gives 5 and 6 channels, 5.0(side) and 5.1(side) (FLAC-in-Ogg uploads). So an Opus encode
 * ends its chain converting to its count's Vorbis layout: for those two a relabel (the side pair becomes the back pair,
 * samples untouched), and never a change of channel count.
 */
const opusLayouts = ["mono", "stereo", "3.0", "quad", "5.0", "5.1", "6.1", "7.1"];

/** Whether the family encodes with libopus (Ogg and WebM). */
export const encodesOpus = (mimeType: AcceptedMimeType): boolean => familyEncodings[mimeType].args.includes("libopus");

/** The filter an encode of `channels` in the family ends its filter chain with, where its encoder needs one. */
export const encoderLayoutFilter = (mimeType: AcceptedMimeType, channels: number): string | undefined => {
  const layout = opusLayouts[channels - 1];
  return encodesOpus(mimeType) && layout ? `aformat=channel_layouts=${layout}` : undefined;
};

/** A family's encoding split into its codec options and its muxer (the `-f <format>` every family's arguments end with). */
export const codecAndFormat = (mimeType: AcceptedMimeType): { codec: string[]; format: string } => {
  const { args } = familyEncodings[mimeType];
  const at = args.lastIndexOf("-f");
  return { codec: [...args.slice(0, at), ...args.slice(at + 2)], format: args[at + 1]! };
};

/**
 * The mp3 rendition for playback (`GET /api/v1/audio?format=mp3`): mono, 22.05 kHz, 64 kbit/s, LAME's fastest
 * search. Speech loses nothing audible, and it encodes about three times faster than LAME's defaults at 44.1 kHz.
 */
export const mp3Rendition: Encoding = {
  args: ["-c:a", "libmp3lame", "-ac", "1", "-ar", "22050", "-b:a", "64k", "-compression_level", "9", "-f", "mp3"],
  ext: "mp3",
};

/** Only the audio stream, and no metadata or cover art carried over. */
export const audioOnly = ["-map", "0:a:0", "-map_metadata", "-1", "-vn"];
