/**
 * A provider's language code as a canonical BCP-47 tag: ISO 639-3 codes that have a two-letter form take it ("eng"
 * becomes "en", "cmn" becomes "zh") through CLDR's aliases as Intl applies them, and "en-us" becomes "en-US".
 * Undefined when the provider names no language, or something that is not a tag.
 */
export function languageTag(code: string | null | undefined): string | undefined {
  if (!code) return undefined;
  let tag: string | undefined;
  try {
    [tag] = Intl.getCanonicalLocales(code);
  } catch {
    return undefined;
  }
  // "und" is BCP-47's "undetermined": no language detected.
  return tag && tag !== "und" && tag.length <= 35 ? tag : undefined;
}
