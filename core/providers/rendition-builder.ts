/** The port `GET /api/v1/audio?format=mp3` uses to build a missing mp3 rendition (the rendition service's `/v1/render`). */
import type { AcceptedMimeType } from "../records/accepted-types";

export interface RenditionBuilder {
  /** Builds and stores the mp3 rendition of `blobs/<appId>/<cid>`; throws a ProviderError when it cannot. */
  buildMp3(source: { appId: string; cid: string; mimeType: AcceptedMimeType }): Promise<void>;
}
