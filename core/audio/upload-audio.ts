/** `POST /api/v1/audio/upload`: the multipart `file` part, ingested in one streaming pass. */
import type { BlobStore } from "../blobs/blob-store";
import type { HttpRequest } from "../http-message/http-message";
import type { Sql } from "../sql/port";
import { type IngestedAudio, ingestAudio } from "./ingest-audio";
import { readMultipartFile } from "./read-multipart-file";

export interface UploadAudioOptions {
  store: BlobStore;
  sql: Sql;
  appId: string;
  request: HttpRequest;
  maxBytes?: number;
}

/** Answer `{ blob: result.blob }` with 201. */
export async function uploadAudio({ store, sql, appId, request, maxBytes }: UploadAudioOptions): Promise<IngestedAudio> {
  const file = await readMultipartFile(request, { maxBytes });
  return ingestAudio({ store, sql, appId, mimeType: file.mimeType, source: file.stream, maxBytes });
}
