import { ensureValidDid } from "@atproto/syntax";
import { DomainError, validationError } from "../domain-error";

export const MAX_ACTOR_LENGTH = 256;

/** 1 to 256 characters (code points, as JSON Schema's `maxLength` counts them: an emoji is one, not two). */
export const isActorLength = (id: string): boolean => {
  const length = [...id].length;
  return length >= 1 && length <= MAX_ACTOR_LENGTH;
};

// Control characters (C0, DEL, C1), U+FFFD (what bytes that were not UTF-8 decode to), and lone surrogates. And a
// comma: a header sent twice arrives joined with "," on either host, which must not read as another actor.
const unprintable = /[\p{Cc}\uFFFD\p{Cs},]/u;

/**
 * The acting end user the tenant asserts: an opaque id (stored as `authorId`) and an optional DID.
 * Header values are UTF-8 (the hosts decode them so); the id is normalised to NFC so that one name has one
 * spelling whichever form the caller's platform sends. Bad values are a 400 rather than silently ignored, so a
 * caller bug never writes under the wrong id.
 */
export const readActingActor = (
  headers: Readonly<Record<string, string | undefined>>,
): { actor?: string; actorDid?: string } => {
  const actor = headers["x-svc-acting-actor"]?.normalize("NFC");
  const actorDid = headers["x-svc-acting-actor-did"];
  if (actor !== undefined && (!isActorLength(actor) || unprintable.test(actor))) {
    throw validationError(`X-Svc-Acting-Actor must be sent once, as 1 to ${MAX_ACTOR_LENGTH} printable UTF-8 characters without a comma`, [
      { path: ["headers", "X-Svc-Acting-Actor"], message: "invalid acting actor" },
    ]);
  }
  if (actorDid !== undefined) {
    try {
      ensureValidDid(actorDid);
    } catch {
      throw validationError("X-Svc-Acting-Actor-Did must be one DID", [
        { path: ["headers", "X-Svc-Acting-Actor-Did"], message: "invalid DID" },
      ]);
    }
    if (actor === undefined) throw new DomainError("ACTING_ACTOR_REQUIRED", "X-Svc-Acting-Actor-Did needs X-Svc-Acting-Actor");
  }
  return { actor: actor || undefined, actorDid };
};
