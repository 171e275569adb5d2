import { isValidDid } from "@atproto/syntax";
import { nsids } from "./nsids";
import { isTid } from "./tid";

const postUriPattern = new RegExp(`^at://([^/?#]+)/${nsids.post.replaceAll(".", "\\.")}/([^/?#]+)$`);

/** `at://<did>/dev.svc.audio.post/<rkey>`; throws on a malformed DID or a record key that is not a TID. */
export function postUri(did: string, rkey: string): string {
  if (!isValidDid(did)) throw new Error(`postUri: invalid DID ${JSON.stringify(did)}`);
  if (!isTid(rkey)) throw new Error(`postUri: record key is not a TID: ${JSON.stringify(rkey)}`);
  return `at://${did}/${nsids.post}/${rkey}`;
}

/** The DID and TID record key of a post URI, or null for anything else (other collections included). */
export function parsePostUri(uri: string): { did: string; rkey: string } | null {
  const match = postUriPattern.exec(uri);
  if (!match) return null;
  const [, did, rkey] = match as unknown as [string, string, string];
  return isValidDid(did) && isTid(rkey) ? { did, rkey } : null;
}
