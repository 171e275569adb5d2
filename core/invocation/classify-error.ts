import { DomainError } from "../domain-error";
import { isDependencyUnavailable } from "./dependency-unavailable";

/**
 * Every failure as a DomainError: a domain error stays itself; a dependency that could not be reached becomes
 * SERVICE_UNAVAILABLE (retry later); anything else is INTERNAL (a fault in this code). `expected` tells the caller
 * whether the error was a domain answer (no stack worth logging) or not.
 */
export const classifyError = (error: unknown): { failure: DomainError; expected: boolean } => {
  if (error instanceof DomainError) return { failure: error, expected: true };
  const failure = isDependencyUnavailable(error)
    ? new DomainError("SERVICE_UNAVAILABLE", "a dependency is unavailable; retry later")
    : new DomainError("INTERNAL", "internal error");
  return { failure, expected: false };
};
