/**
 * The `elevenlabs` denoiser: `POST /v1/audio-isolation` with `xi-api-key` and multipart `audio`; the answer is mp3.
 * It is re-encoded like the upload (its family and channel count) right here, by ffmpeg in the worker (FFMPEG_PATH or
 * `@ffmpeg-installer`), because this provider is available with only its key, with or without a rendition service.
 */
import type { BlobStore } from "../../blobs/blob-store";
import { encodeInFamily, UndecodableBytesError } from "../../rendition/encode-in-family";
import { resolveFfmpegPath } from "../../rendition/ffmpeg-path";
import { FfmpegError } from "../../rendition/run-ffmpeg";
import { blobBytes } from "../blob-bytes";
import { type Denoiser, ProviderError } from "../provider-port";
import { providerFetch, readBody } from "../provider-http";

/**
 * The most bytes of an isolated answer read. It is mp3 (this adapter asks for no other format), whose highest bitrate
 * is 320 kbit/s, 40,000 bytes a second; ElevenLabs isolates at most an hour of audio, so whatever an upload (up to
 * 25 MB, and at a codec's lowest rate hours long) holds, an answer it legitimately gives is at most 144,000,000
 * bytes. The rest is room for tags.
 */
export const maxIsolatedBytes = 160 * 1024 * 1024;

export interface ElevenLabsDenoiserOptions {
  baseUrl: string;
  apiKey: string;
  blobs: BlobStore;
  /** FFMPEG_PATH as configured; unset, resolveFfmpegPath() looks the static build up when a clip is denoised. */
  ffmpeg?: string;
  fetch?: typeof fetch;
}

export function createElevenLabsDenoiser(options: ElevenLabsDenoiserOptions): Denoiser {
  return {
    name: "elevenlabs",
    async denoise(audio, call) {
      const uploaded = new Uint8Array(await blobBytes(options.blobs, audio));
      const form = new FormData();
      form.append("audio", new Blob([uploaded], { type: audio.mimeType }), `${audio.cid}`);
      const response = await providerFetch(
        "elevenlabs audio-isolation",
        `${options.baseUrl}/v1/audio-isolation`,
        { method: "POST", headers: { "xi-api-key": options.apiKey }, body: form },
        call,
        options.fetch,
      );
      const isolated = await readBody("elevenlabs audio-isolation", response, call, maxIsolatedBytes);
      if (isolated.length === 0) throw new ProviderError("fail", "elevenlabs audio-isolation: empty answer");
      let ffmpeg: string;
      try {
        ffmpeg = options.ffmpeg ?? resolveFfmpegPath();
      } catch {
        // A deployment fault, not the audio's: the stage's function needs ffmpeg (FFMPEG_PATH) to re-encode.
        throw new ProviderError("fail", "elevenlabs audio-isolation: no ffmpeg here to re-encode the answer (set FFMPEG_PATH)");
      }
      try {
        const variant = await encodeInFamily({ store: options.blobs, ffmpeg, signal: call.signal }, isolated, "mp3", { appId: audio.appId, mimeType: audio.mimeType, bytes: uploaded });
        return { appId: audio.appId, mimeType: audio.mimeType, ...variant };
      } catch (error) {
        if (error instanceof UndecodableBytesError) throw new ProviderError("fail", "elevenlabs audio-isolation: the answer is not audio ffmpeg can decode");
        // The answer decoded: re-encoding it like the upload (or reading the upload) failed here, not at the provider.
        if (error instanceof FfmpegError) throw new ProviderError("fail", `elevenlabs audio-isolation: re-encoding the answer as ${audio.mimeType} failed (${error.message})`, "provider_error", { cause: error });
        throw error;
      }
    },
  };
}
