import { Lexicons, jsonToLex, parseLexiconDoc, type LexiconDoc } from "@atproto/lexicon";
import actorProfile from "../../lexicons/dev.svc.actor.profile.json";
import audioPost from "../../lexicons/dev.svc.audio.post.json";
import audioTranscript from "../../lexicons/dev.svc.audio.transcript.json";
import embedAudio from "../../lexicons/dev.svc.embed.audio.json";
import { assertBlobConstraints } from "./blob-constraints";

/**
 * Every document in lexicons/, imported statically so bundled functions carry them
 * (lexicons.test.ts checks this list against the directory).
 */
export const lexiconDocs: readonly LexiconDoc[] = [actorProfile, audioPost, audioTranscript, embedAudio].map((doc) =>
  parseLexiconDoc(doc),
);

// Lexicons.add rewrites refs in place, so it gets copies and lexiconDocs stays as written.
export const lexicons = new Lexicons(lexiconDocs.map((doc) => structuredClone(doc)));

/**
 * Throws a ValidationError unless `record` (lex-json, as stored: `{ $link }`, `{ $bytes }`) is a valid
 * record of type `nsid`, blob `accept` and `maxSize` included.
 */
export function assertValidRecord(nsid: string, record: unknown): void {
  const value = jsonToLex(record);
  lexicons.assertValidRecord(nsid, value);
  assertBlobConstraints(lexicons, nsid, value);
}
