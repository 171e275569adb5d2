/**
 * A `%` not followed by two hex digits: a request target that URL decoders read differently (one keeps it as text,
 * another refuses it), so every host refuses it with the same 400 rather than guess.
 */
export const hasMalformedPercentEscape = (text: string): boolean => /%(?![0-9A-Fa-f]{2})/.test(text);

/**
 * A request target (path, and query after `?`) every host refuses with 400 before any route: a malformed escape, or
 * a path starting `//`, which URL parsers read as a host and a host as a path.
 */
export const isMalformedTarget = (target: string): boolean => target.startsWith("//") || hasMalformedPercentEscape(target);

/**
 * A path segment percent-decoded as URL parsers decode a query (WHATWG percent-decode, then UTF-8 decode): escapes
 * whose bytes are not UTF-8 become U+FFFD, where `decodeURIComponent` throws. The segment still names its route,
 * whose own checks then answer for it (a post id that is no TID is 404 `post not found`).
 */
export const decodePathSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    const bytes = segment.replace(/%([0-9A-Fa-f]{2})|[^%]+|%/g, (text, hex: string | undefined) =>
      hex === undefined ? Buffer.from(text, "utf8").toString("latin1") : String.fromCharCode(parseInt(hex, 16)),
    );
    return Buffer.from(bytes, "latin1").toString("utf8");
  }
};
