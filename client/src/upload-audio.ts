import { blobRefMimeTypeValues, type components } from "./generated/openapi.js";
import { SvcError } from "./svc-error.js";
import { exchange, send, withRetries, type Actor, type Transport } from "./transport.js";

export type BlobRef = components["schemas"]["BlobRef"];
export type AudioType = BlobRef["mimeType"];
export type AudioData = Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface UploadProgress {
  /** Bytes of the audio sent so far. */
  loaded: number;
  total: number;
}

export interface UploadAudioOptions {
  /** The audio's type; parameters are dropped when the base type is accepted (`audio/webm;codecs=opus`). A Blob's own type by default. */
  mimeType?: string;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

const progressChunkBytes = 256 * 1024;

/** The upload limit (25 MiB), as the description's BlobRef.size maximum says. */
export const maxUploadBytes = 26_214_400;

export const acceptedAudioTypes: readonly AudioType[] = blobRefMimeTypeValues;

const refused = (code: "UNSUPPORTED_MEDIA_TYPE" | "FILE_TOO_LARGE", message: string) => new SvcError({ status: 400, code, message, requestId: null });

/** The accepted type a declared MIME type stands for, or a refusal listing the accepted ones. */
export const acceptedAudioType = (mimeType: string | undefined): AudioType => {
  const base = (mimeType ?? "").split(";")[0]!.trim().toLowerCase();
  const found = acceptedAudioTypes.find((type) => type === base);
  if (found) return found;
  throw refused("UNSUPPORTED_MEDIA_TYPE", `"${mimeType ?? ""}" is not an accepted audio type; accepted: ${acceptedAudioTypes.join(", ")}`);
};

/** The audio as one Blob, read no further than the limit (a stream has no size until it ends). */
const audioBlob = async (data: AudioData, type: AudioType, signal: AbortSignal | undefined): Promise<Blob> => {
  if (data instanceof Blob) return data.type === type ? data : new Blob([data], { type });
  if (data instanceof Uint8Array) return new Blob([data as Uint8Array<ArrayBuffer>], { type });
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  const iterable = data instanceof ReadableStream ? streamChunks(data) : data;
  for await (const chunk of iterable) {
    signal?.throwIfAborted();
    size += chunk.byteLength;
    if (size > maxUploadBytes) throw refused("FILE_TOO_LARGE", `audio over ${maxUploadBytes} bytes`);
    chunks.push(chunk as Uint8Array<ArrayBuffer>);
  }
  return new Blob(chunks, { type });
};

async function* streamChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) yield next.value;
  } finally {
    reader.releaseLock();
  }
}

/**
 * A multipart body of `fields` then `file`, encoded by the platform. With a progress callback it is sent as a
 * stream of known length that reports the audio's bytes as the connection takes them; otherwise as is.
 */
const multipartBody = async (fields: Record<string, string>, file: Blob, onProgress: UploadAudioOptions["onProgress"]) => {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("file", file, "audio");
  const encoded = await new Response(form).blob();
  const headers = { "content-type": encoded.type };
  return (): { body: BodyInit; headers: Record<string, string> } => {
    if (!onProgress) return { body: encoded, headers };
    const overhead = encoded.size - file.size;
    let sent = 0;
    // Pulled a slice at a time, as the connection takes them (no read-ahead), so progress follows the wire.
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (sent >= encoded.size) return controller.close();
          const chunk = new Uint8Array(await encoded.slice(sent, sent + progressChunkBytes).arrayBuffer());
          sent += chunk.byteLength;
          controller.enqueue(chunk);
          onProgress({ loaded: Math.min(file.size, Math.max(0, sent - overhead)), total: file.size });
        },
      },
      { highWaterMark: 0 },
    );
    return { body, headers: { ...headers, "content-length": String(encoded.size) } };
  };
};

interface DirectUpload {
  uploadId: string;
  url: string;
  fields: Record<string, string>;
}

/**
 * Uploads audio of up to 25 MiB on either deployment: straight to storage with a presigned POST where the service
 * hands one out (S3), else through the multipart route (the file store answers 404 to the presigned request, and the
 * client remembers). Both are safe to retry: uploads are content-addressed, and an unused presigned POST expires.
 */
export const uploadAudio = async (transport: Transport, who: Actor, data: AudioData, options: UploadAudioOptions = {}): Promise<BlobRef> => {
  const { signal, onProgress } = options;
  const type = acceptedAudioType(options.mimeType ?? (data instanceof Blob ? data.type : undefined));
  signal?.throwIfAborted();
  const file = await audioBlob(data, type, signal);
  if (file.size > maxUploadBytes) throw refused("FILE_TOO_LARGE", `audio over ${maxUploadBytes} bytes`);
  if (transport.directUploads !== false) {
    let direct: DirectUpload | undefined;
    try {
      direct = await send<DirectUpload>(transport, who, { method: "POST", path: "/api/v1/audio/uploads", json: { mimeType: type, size: file.size }, signal });
      transport.directUploads = true;
    } catch (error) {
      if (!(error instanceof SvcError && error.status === 404)) throw error;
      transport.directUploads = false;
    }
    if (direct) {
      await postToStorage(transport, direct, await multipartBody(direct.fields, file, onProgress), signal);
      const done = await send<{ blob: BlobRef }>(transport, who, { method: "POST", path: `/api/v1/audio/uploads/${encodeURIComponent(direct.uploadId)}/complete`, signal });
      return done.blob;
    }
  }
  const body = await multipartBody({}, file, onProgress);
  const { blob } = await send<{ blob: BlobRef }>(transport, who, { method: "POST", path: "/api/v1/audio/upload", body, signal });
  return blob;
};

/** The presigned POST to storage: no service token goes there; storage answers 2xx or an XML error. */
const postToStorage = (transport: Transport, direct: DirectUpload, body: Awaited<ReturnType<typeof multipartBody>>, signal: AbortSignal | undefined) =>
  withRetries(transport, signal, async () => {
    const built = body();
    const { response, text } = await exchange(transport, direct.url, { method: "POST", headers: built.headers, body: built.body }, signal);
    if (response.ok) return;
    const reason = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? response.statusText;
    throw new SvcError({
      status: response.status,
      code: response.status >= 500 ? "SERVICE_UNAVAILABLE" : "FORBIDDEN",
      message: `storage refused the upload: ${response.status} ${reason}`,
      requestId: null,
    });
  });
