import { postUri } from "../records/at-uri";
import type { PostRow } from "./post-row";
import type { PostView } from "./post-view-schema";
import { replyVerdict } from "./reply-gating";
import { blobKey } from "../blobs/blob-key";

export interface Projection {
  appId: string;
  /** The tenant's app DID, under which its posts are addressed. */
  did: string;
  /** The acting actor; undefined makes the projection viewer-less. */
  actor: string | undefined;
  /** Signs a playback address for a blob key (`blobs/<appId>/<cid>`). */
  playbackUrl: (key: string) => string;
}

/** The canonical record seen by one viewer: the server decides visibility and reply rights, no caller flag widens them. */
export const toPostView = (row: PostRow, view: Projection): PostView => {
  const { record } = row;
  const audio = record.embed?.audio;
  const verdict = replyVerdict(row, view.actor);
  return {
    uri: postUri(view.did, row.rkey),
    cid: row.cid,
    kind: row.kind,
    authorId: row.authorId,
    ...(row.authorDid ? { authorDid: row.authorDid } : {}),
    record,
    ...(audio ? { embed: embedView(row, view, current(row)!) } : {}),
    ...(view.actor
      ? {
          viewer: {
            isAuthor: row.authorId === view.actor,
            canReply: verdict.canReply,
            ...(verdict.canReply ? {} : { replyDisabledReason: verdict.reason }),
          },
        }
      : {}),
    ...(row.processing ? { processing: row.processing } : {}),
  };
};

/** The bytes the embed describes: the processed variant once denoise, trim or normalize is ready, else the upload. */
const current = (row: PostRow) => {
  if (row.variant) return row.variant;
  const audio = row.record.embed?.audio;
  return audio ? { cid: audio.ref.$link, mimeType: audio.mimeType, size: audio.size, durationMs: row.durationMs } : null;
};

/** The embed view, with the transcript lifted from its record, the waveform, and the loudness once normalize is ready. */
const embedView = (row: PostRow, view: Projection, audio: NonNullable<ReturnType<typeof current>>) => {
  const transcript = row.transcript;
  return {
    $type: "dev.svc.embed.audio#view" as const,
    url: view.playbackUrl(blobKey(view.appId, audio.cid)),
    mimeType: audio.mimeType,
    size: audio.size,
    ...(audio.durationMs !== null ? { durationMs: audio.durationMs } : {}),
    ...(transcript
      ? {
          transcript: {
            text: transcript.text,
            ...(transcript.lang !== undefined && { lang: transcript.lang }),
            ...(transcript.segments !== undefined && { segments: transcript.segments }),
          },
        }
      : {}),
    ...(row.waveform ? { waveform: row.waveform } : {}),
    ...(row.loudness && row.processing?.normalize?.status === "ready" ? { loudness: row.loudness } : {}),
  };
};
