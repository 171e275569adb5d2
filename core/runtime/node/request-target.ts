/**
 * The request target as the Node host receives it (origin-form `/path?query`, or absolute-form
 * `http://host/path?query`), parsed without ever throwing: a target that names no URL is `undefined` (answered 400).
 * A target starting `//` is refused rather than guessed at: URL parsers read it as a host, the host as a path.
 */
import { isMalformedTarget } from "../../http-message/percent-encoding";

export const parseRequestTarget = (target: string | undefined): { pathname: string; query: URLSearchParams } | undefined => {
  const raw = target ?? "/";
  if (isMalformedTarget(raw)) return undefined;
  let url: URL;
  try {
    if (raw.startsWith("/")) url = new URL(`http://origin-form${raw}`);
    else {
      url = new URL(raw);
      if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    }
  } catch {
    return undefined;
  }
  return { pathname: url.pathname, query: url.searchParams };
};
