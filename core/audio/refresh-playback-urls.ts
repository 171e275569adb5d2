/**
 * A stored answer with its playback URL signed again at `now`. An idempotent replay answers the stored body up to 24
 * hours after it was first sent, but a playback URL in it lives an hour: replayed as stored, the post's audio would
 * not play. Only the post view's own `embed.url` is signed again, and only for a blob of the tenant replaying: any
 * other string of the answer (a post's text, written by its author) stays as stored, so a replay never signs a URL
 * the service did not hand out itself.
 */
import { parseBlobKey } from "../blobs/blob-key";
import { playbackUrlPrefix, signPlaybackUrl } from "./playback-url";

export interface RefreshOptions {
  /** SVC_PUBLIC_BASE_URL */
  baseUrl: string;
  secret: string;
  now: Date;
  /** The tenant the answer is replayed to: only its own blobs are signed. */
  appId: string;
}

type Envelope = { data?: { embed?: { url?: unknown } } };

export const refreshPlaybackUrls = (answer: unknown, options: RefreshOptions): unknown => {
  const embed = (answer as Envelope | null)?.data?.embed;
  const url = embed?.url;
  const prefix = playbackUrlPrefix(options.baseUrl);
  if (typeof url !== "string" || !url.startsWith(prefix)) return answer;
  const key = new URLSearchParams(url.slice(prefix.length)).get("url");
  if (!key || parseBlobKey(key)?.appId !== options.appId) return answer;
  const { data } = answer as { data: { embed: object } };
  return { ...(answer as object), data: { ...data, embed: { ...data.embed, url: signPlaybackUrl({ ...options, key }) } } };
};
