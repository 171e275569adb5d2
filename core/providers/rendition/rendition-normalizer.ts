/** The `rendition` normalizer: `/v1/normalize` on the rendition service (docs/decisions.md#loudness). */
import type { Normalizer } from "../provider-port";
import type { RenditionClient } from "./rendition-client";
import { normalizedFrom } from "./rendition-answers";

export const createRenditionNormalizer = (client: RenditionClient): Normalizer => ({
  name: "rendition",
  async normalize(audio, call) {
    return normalizedFrom(await client.call("normalize", audio, call), audio);
  },
});
