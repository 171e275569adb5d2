/** The seven accepted upload MIME types (exact strings, no parameters) and the container family each must sniff as. */
export type AudioFamily = "mp4" | "mp3" | "webm" | "ogg" | "wav";

export const acceptedAudioTypes = {
  "audio/m4a": "mp4",
  "audio/x-m4a": "mp4",
  "audio/mp4": "mp4",
  "audio/mpeg": "mp3",
  "audio/webm": "webm",
  "audio/ogg": "ogg",
  "audio/wav": "wav",
} as const satisfies Record<string, AudioFamily>;

export type AcceptedMimeType = keyof typeof acceptedAudioTypes;

export const acceptedMimeTypes = Object.keys(acceptedAudioTypes) as AcceptedMimeType[];

/** Exact match: `audio/webm;codecs=opus` or `Audio/WAV` is not on the list. */
export const isAcceptedMimeType = (value: string): value is AcceptedMimeType => Object.hasOwn(acceptedAudioTypes, value);

/**
 * Why a declared type is refused, and what to send instead: the accepted list, and the bare type when the value
 * only added parameters (MediaRecorder reports `audio/webm;codecs=opus`; the upload must say `audio/webm`).
 */
export function unsupportedMimeTypeMessage(declared: string): string {
  const list = `the type must be exactly one of ${acceptedMimeTypes.join(", ")}`;
  const bare = declared.split(";")[0]!.trim().toLowerCase();
  const fix = bare !== declared && isAcceptedMimeType(bare) ? `; drop parameters such as codecs and send ${JSON.stringify(bare)}` : ", without parameters such as codecs";
  return `unsupported media type ${JSON.stringify(declared)}: ${list}${fix}`;
}

/** 25 MiB: an upload of more bytes is refused with FILE_TOO_LARGE. */
export const maxUploadBytes = 26_214_400;
