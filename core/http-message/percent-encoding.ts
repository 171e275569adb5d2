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
