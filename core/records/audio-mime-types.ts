/** Upload MIME types accepted exactly (interface.md section 8); mirrors the `accept` list of dev.svc.embed.audio. */
export const audioMimeTypes = [
  "audio/m4a",
  "audio/x-m4a",
  "audio/mp4",
  "audio/mpeg",
  "audio/webm",
  "audio/ogg",
  "audio/wav",
] as const;

export type AudioMimeType = (typeof audioMimeTypes)[number];

/** 25 MiB, the upload limit and the lexicon's blob maxSize. */
export const maxAudioBytes = 26_214_400;

export const isAudioMimeType = (value: string): value is AudioMimeType =>
  (audioMimeTypes as readonly string[]).includes(value);
