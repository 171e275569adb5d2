/** The blob reference an upload answers and a post's `embed.audio` carries verbatim. */
export interface BlobRef {
  $type: "blob";
  ref: { $link: string };
  mimeType: string;
  size: number;
}

export const blobRef = (cid: string, mimeType: string, size: number): BlobRef => ({
  $type: "blob",
  ref: { $link: cid },
  mimeType,
  size,
});
