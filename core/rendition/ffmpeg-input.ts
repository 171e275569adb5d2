/**
 * An ffmpeg input named with its demuxer. Left to guess, ffmpeg reads a file's format from its bytes, and an upload
 * only has to sniff as its family: an "MP3" that is an ID3 tag and then an HLS playlist was opened as the playlist,
 * whose entries (any media file on the host, another tenant's rendition) became the clip's audio. Read as its
 * family's demuxer, the same file is only the MP3 frames it holds. `runFfmpeg` refuses an input without one.
 */
import { acceptedAudioTypes, type AcceptedMimeType, type AudioFamily } from "../records/accepted-types";

/** ffmpeg's demuxer of each family (`mov` reads MP4 and M4A; `matroska` reads WebM). */
const demuxers: Record<AudioFamily, string> = { mp3: "mp3", mp4: "mov", webm: "matroska", ogg: "ogg", wav: "wav" };

/** `-f <demuxer> -i <path>` for a file (or `pipe:0`) holding audio of `family`. */
export const ffmpegInput = (path: string, family: AudioFamily): string[] => ["-f", demuxers[family], "-i", path];

/** The same for a file holding audio of that declared type. */
export const typedInput = (path: string, mimeType: AcceptedMimeType): string[] => ffmpegInput(path, acceptedAudioTypes[mimeType]);

/** The first input of `args` that names no demuxer (no `-f` among its options), or undefined. */
export const unnamedInput = (args: readonly string[]): string | undefined => {
  let options = 0;
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== "-i") continue;
    if (!args.slice(options, i).includes("-f")) return args[i + 1];
    options = i + 2;
  }
  return undefined;
};
