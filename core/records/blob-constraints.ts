import { BlobRef, ValidationError, type LexUserType, type Lexicons } from "@atproto/lexicon";

/**
 * Enforces a blob def's `accept` and `maxSize`, which @atproto/lexicon's record validation leaves unchecked.
 * Runs on a value that already passed lexicon validation, in lex form (blobs as BlobRef).
 */
export function assertBlobConstraints(lexicons: Lexicons, nsid: string, value: unknown): void {
  const def = lexicons.getDefOrThrow(nsid, ["record"]);
  walk(lexicons, "Record", def.record, value);
}

type Def = LexUserType | { type: "ref"; ref: string } | { type: "union"; refs: string[] };

function walk(lexicons: Lexicons, path: string, def: Def, value: unknown): void {
  if (value === undefined || value === null) return;
  switch (def.type) {
    case "ref":
      return walk(lexicons, path, lexicons.getDefOrThrow(def.ref), value);
    case "union": {
      const ref = matchingRef(def.refs, (value as { $type?: unknown }).$type);
      // An open union lets unknown types through untouched, as the validator does.
      if (ref) walk(lexicons, path, lexicons.getDefOrThrow(ref), value);
      return;
    }
    case "object":
      for (const [key, propDef] of Object.entries(def.properties ?? {})) {
        walk(lexicons, `${path}/${key}`, propDef as Def, (value as Record<string, unknown>)[key]);
      }
      return;
    case "array":
      if (Array.isArray(value)) value.forEach((item, i) => walk(lexicons, `${path}/${i}`, def.items as Def, item));
      return;
    case "blob":
      if (value instanceof BlobRef) checkBlob(path, def.accept, def.maxSize, value);
      return;
    default:
      return;
  }
}

function checkBlob(path: string, accept: string[] | undefined, maxSize: number | undefined, blob: BlobRef): void {
  if (accept && !accept.some((pattern) => mimeMatches(pattern, blob.mimeType))) {
    throw new ValidationError(`${path} mimeType must be one of ${accept.join(", ")}`);
  }
  if (maxSize !== undefined && blob.size > maxSize) {
    throw new ValidationError(`${path} must not be larger than ${maxSize} bytes`);
  }
}

/** Exact match, or a `type/*` / `*\/*` wildcard as the lexicon spec allows. */
function mimeMatches(pattern: string, mimeType: string): boolean {
  if (pattern === "*/*") return true;
  if (pattern.endsWith("/*")) return mimeType.startsWith(pattern.slice(0, -1)) && !mimeType.includes(";");
  return pattern === mimeType;
}

/** Refs are stored resolved (`lex:<nsid>[#def]`); a `$type` may omit or spell out `#main`. */
function matchingRef(refs: string[], $type: unknown): string | undefined {
  if (typeof $type !== "string") return undefined;
  const wanted = `lex:${$type}`.replace(/#main$/, "");
  return refs.find((ref) => ref.replace(/#main$/, "") === wanted);
}
