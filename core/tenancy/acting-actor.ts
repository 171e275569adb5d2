import { ensureValidDid } from "@atproto/syntax";
import { DomainError, validationError } from "../domain-error";

const MAX_ACTOR_LENGTH = 256;

/**
 * The acting end user the tenant asserts: an opaque id (stored as `authorId`) and an optional DID.
 * Bad values are a 400 rather than silently ignored, so a caller bug never writes under the wrong id.
 */
export const readActingActor = (
  headers: Readonly<Record<string, string | undefined>>,
): { actor?: string; actorDid?: string } => {
  const actor = headers["x-svc-acting-actor"];
  const actorDid = headers["x-svc-acting-actor-did"];
  if (actor !== undefined && (actor.length === 0 || actor.length > MAX_ACTOR_LENGTH || /[\x00-\x1f\x7f]/.test(actor))) {
    throw validationError(`X-Svc-Acting-Actor must be 1 to ${MAX_ACTOR_LENGTH} printable characters`, [
      { path: ["headers", "X-Svc-Acting-Actor"], message: "invalid acting actor" },
    ]);
  }
  if (actorDid !== undefined) {
    try {
      ensureValidDid(actorDid);
    } catch {
      throw validationError("X-Svc-Acting-Actor-Did must be a DID", [
        { path: ["headers", "X-Svc-Acting-Actor-Did"], message: "invalid DID" },
      ]);
    }
    if (actor === undefined) throw new DomainError("ACTING_ACTOR_REQUIRED", "X-Svc-Acting-Actor-Did needs X-Svc-Acting-Actor");
  }
  return { actor: actor || undefined, actorDid };
};
