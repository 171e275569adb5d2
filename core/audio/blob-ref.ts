import type { BlobRef } from "../records/post-schema";
import type { AcceptedMimeType } from "../records/accepted-types";

export type { BlobRef };

/** The blob reference an upload answers and a post's `embed.audio` carries verbatim. */
export const blobRef = (cid: string, mimeType: AcceptedMimeType, size: number): BlobRef => ({
  $type: "blob",
  ref: { $link: cid },
  mimeType,
  size,
});
