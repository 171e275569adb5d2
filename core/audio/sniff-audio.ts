/** Magic-number sniffing: the bytes must be a container of the family the declared MIME type names. */
import { fileTypeFromBuffer } from "file-type";
import { DomainError } from "../domain-error";
import { type AcceptedMimeType, type AudioFamily, acceptedAudioTypes } from "../records/accepted-types";

/** How many leading bytes the sniffer looks at (file-type's own detection window). */
export const sniffWindowBytes = 4100;

// file-type extensions per family. MP4 excludes the video-only brands (m4v, m4p, f4v, f4p, mov, 3gp);
// Ogg excludes Theora and OGM video and the generic `ogx`.
const familyExtensions: Record<AudioFamily, readonly string[]> = {
  mp4: ["m4a", "mp4", "m4b", "f4a", "f4b"],
  mp3: ["mp3"],
  webm: ["webm"],
  ogg: ["ogg", "oga", "opus", "spx"],
  wav: ["wav"],
};

/** The audio family the leading bytes belong to, or undefined when they are no accepted kind of audio container. */
export async function sniffAudioFamily(head: Uint8Array): Promise<AudioFamily | undefined> {
  const detected = await fileTypeFromBuffer(head);
  if (!detected) return undefined;
  return (Object.keys(familyExtensions) as AudioFamily[]).find((family) => familyExtensions[family].includes(detected.ext));
}

export async function assertAudioFamily(head: Uint8Array, mimeType: AcceptedMimeType): Promise<void> {
  const expected = acceptedAudioTypes[mimeType];
  const found = await sniffAudioFamily(head);
  if (found !== expected) {
    throw new DomainError(
      "UNSUPPORTED_MEDIA_TYPE",
      found ? `declared ${mimeType} but the bytes are ${found} audio` : `declared ${mimeType} but the bytes are not ${expected} audio`,
    );
  }
}
