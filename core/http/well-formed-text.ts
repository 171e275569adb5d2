import type { Issue } from "../domain-error";

/** No body the API takes nests half this deep; a deeper one is refused before anything walks it recursively. */
export const maxInputDepth = 32;

/**
 * Every string the API accepts is well-formed Unicode (no lone surrogate, which UTF-8 cannot encode) without
 * NUL (which Postgres text cannot store). Returns an issue per offending string or object key, with its path, and
 * one for input nested deeper than `maxInputDepth` (walked further, it would exhaust the stack: a 500).
 */
export const malformedTextIssues = (value: unknown, path: (string | number)[] = []): Issue[] => {
  if (typeof value === "string") return isStorableText(value) ? [] : [{ path, message: malformedTextMessage }];
  if (!value || typeof value !== "object") return [];
  if (path.length > maxInputDepth) return [{ path, message: `nested too deeply (at most ${maxInputDepth} levels)` }];
  if (Array.isArray(value)) return value.flatMap((item, i) => malformedTextIssues(item, [...path, i]));
  return Object.entries(value).flatMap(([key, item]) => [
    ...(isStorableText(key) ? [] : [{ path: [...path, key], message: malformedTextMessage }]),
    ...malformedTextIssues(item, [...path, key]),
  ]);
};

// In `u` mode a surrogate pair is one code point, so \p{Cs} matches only a lone surrogate.
const unstorable = /[\p{Cs}\u0000]/u;

export const isStorableText = (text: string): boolean => !unstorable.test(text);

export const malformedTextMessage = "must be well-formed Unicode without NUL characters";
