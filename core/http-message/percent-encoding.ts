/**
 * A `%` not followed by two hex digits: a request target that URL decoders read differently (one keeps it as text,
 * another refuses it), so every host refuses it with the same 400 rather than guess.
 */
export const hasMalformedPercentEscape = (text: string): boolean => /%(?![0-9A-Fa-f]{2})/.test(text);
