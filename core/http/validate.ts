import type { z } from "zod";
import { validationError, type Issue } from "../domain-error";

/** Parses `value` with a zod schema, turning failures into a 400 with `issues` rooted at `where`. */
export const validate = <S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: Issue[] = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    message: issue.message,
  }));
  throw validationError(`invalid ${where}`, issues);
};

/** Query strings become plain objects; a repeated parameter is ambiguous and rejected. */
export const queryObject = (query: URLSearchParams): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [key, value] of query) {
    if (key in out) throw validationError(`query parameter ${key} is repeated`, [{ path: ["query", key], message: "repeated" }]);
    out[key] = value;
  }
  return out;
};
