/** The bytes of a blob, for providers that upload audio to an external API (at most 25 MiB, the upload limit). */
import { blobKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import { type AudioRef, ProviderError } from "./provider-port";

export async function blobBytes(store: BlobStore, audio: AudioRef): Promise<Buffer> {
  const found = await store.read(blobKey(audio.appId, audio.cid));
  if (!found) throw new ProviderError("fail", `no blob at ${blobKey(audio.appId, audio.cid)}`);
  const chunks: Buffer[] = [];
  for await (const chunk of found.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
