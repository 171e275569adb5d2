import type { z } from "zod";
import { DomainError, validationError, type Issue } from "../domain-error";
import { malformedTextIssues } from "./well-formed-text";

/**
 * Path parameters name a resource: an issue its schema marks `params: { notFound: true }` (a post id that is not a
 * TID) is 404 NOT_FOUND with the issue's message; any other failure is the usual 400.
 */
export const validateParams = <S extends z.ZodType>(schema: S, value: unknown): z.output<S> => {
  const malformed = malformedTextIssues(value, ["params"]);
  if (malformed.length > 0) throw validationError("invalid params", malformed);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const notFound = result.error.issues.find((issue) => (issue as { params?: { notFound?: boolean } }).params?.notFound);
  if (notFound) throw new DomainError("NOT_FOUND", notFound.message);
  return validate(schema, value, "params");
};

/** Parses `value` with a zod schema, turning failures into a 400 with `issues` rooted at `where`. */
export const validate = <S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> => {
  // Text the database could not store is refused before any schema sees it (else it surfaced as a 500).
  const malformed = malformedTextIssues(value, [where]);
  if (malformed.length > 0) throw validationError(`invalid ${where}`, malformed);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: Issue[] = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    message: issue.message,
  }));
  throw validationError(`invalid ${where}`, issues);
};

/**
 * Query strings become plain objects; a repeated parameter is ambiguous and rejected. The object has no prototype,
 * so `toString` or `__proto__` are parameters like any other (unknown ones, to the route's strict schema).
 */
export const queryObject = (query: URLSearchParams): Record<string, string> => {
  const out: Record<string, string> = Object.create(null);
  for (const [key, value] of query) {
    if (Object.hasOwn(out, key)) throw validationError(`query parameter ${key} is repeated`, [{ path: ["query", key], message: "repeated" }]);
    out[key] = value;
  }
  return out;
};
