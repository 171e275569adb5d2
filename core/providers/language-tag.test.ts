import { describe, expect, it } from "vitest";
import { languageTag } from "./language-tag";

describe("language tags", () => {
  it("ISO 639-3 codes (ElevenLabs) become their BCP-47 form, two letters where one exists", () => {
    expect(["eng", "fra", "deu", "spa", "jpn", "cmn", "nob", "yue"].map(languageTag)).toEqual(["en", "fr", "de", "es", "ja", "zh", "nb", "yue"]);
  });

  it("BCP-47 tags (Transcribe's en-US) stay as they are, in canonical case", () => {
    expect(languageTag("en-US")).toBe("en-US");
    expect(languageTag("pt-br")).toBe("pt-BR");
  });

  it("no language, undetermined or a code that is not a tag gives none", () => {
    for (const code of [undefined, null, "", "und", "not a tag", "e"]) expect(languageTag(code)).toBeUndefined();
  });
});
