/** Where blobs live in a store: `blobs/<appId>/<cid>` for originals, `renditions/<appId>/<cid>.<format>` beside them. */
import { isRawCid } from "./raw-cid";
import { isAppId } from "../tenancy/app-id";

// Store keys are relative, slash-separated, and never name `.` or `..`, so no adapter can be walked out of its root.
const keySegment = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export const isSafeKey = (key: string): boolean => key.length > 0 && key.length <= 512 && key.split("/").every((s) => keySegment.test(s));

export function assertSafeKey(key: string): void {
  if (!isSafeKey(key)) throw new Error(`unsafe blob key: ${JSON.stringify(key)}`);
}

export const blobKey = (appId: string, cid: string): string => `blobs/${appId}/${cid}`;

export interface BlobAddress {
  key: string;
  appId: string;
  cid: string;
}

/** Parses a playback path; undefined unless it is exactly `blobs/<well-formed appId>/<raw sha2-256 CIDv1 in base32>`. */
export function parseBlobKey(path: string): BlobAddress | undefined {
  const parts = path.split("/");
  if (parts.length !== 3) return undefined;
  const [root, appId, cid] = parts as [string, string, string];
  if (root !== "blobs" || !isAppId(appId) || !isRawCid(cid)) return undefined;
  return { key: path, appId, cid };
}

export type RenditionFormat = "mp3";

/** Whether a blob of `mimeType` is its own rendition in `format` (an mp3 upload's mp3): nothing to build, its bytes are served. */
export const isOwnRendition = (mimeType: string, format: RenditionFormat): boolean => format === "mp3" && mimeType === "audio/mpeg";

/** The derived key of a rendition of a blob; kept outside `blobs/` so originals and renditions never mix. */
export function renditionKey(key: string, format: RenditionFormat): string {
  const address = parseBlobKey(key);
  if (!address) throw new Error(`not a blob key: ${JSON.stringify(key)}`);
  return `renditions/${address.appId}/${address.cid}.${format}`;
}
