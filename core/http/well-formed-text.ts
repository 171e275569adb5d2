import type { Issue } from "../domain-error";

/**
 * Every string the API accepts is well-formed Unicode (no lone surrogate, which UTF-8 cannot encode) without
 * NUL (which Postgres text cannot store). Returns an issue per offending string or object key, with its path.
 */
export const malformedTextIssues = (value: unknown, path: (string | number)[] = []): Issue[] => {
  if (typeof value === "string") return isStorableText(value) ? [] : [{ path, message: malformedTextMessage }];
  if (Array.isArray(value)) return value.flatMap((item, i) => malformedTextIssues(item, [...path, i]));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => [
      ...(isStorableText(key) ? [] : [{ path: [...path, key], message: malformedTextMessage }]),
      ...malformedTextIssues(item, [...path, key]),
    ]);
  }
  return [];
};

// In `u` mode a surrogate pair is one code point, so \p{Cs} matches only a lone surrogate.
const unstorable = /[\p{Cs}\u0000]/u;

export const isStorableText = (text: string): boolean => !unstorable.test(text);

export const malformedTextMessage = "must be well-formed Unicode without NUL characters";
