/** The `rendition` trimmer: `/v1/trim` on the rendition service; the variant is stored in the shared blob store. */
import type { Trimmer } from "../provider-port";
import type { RenditionClient } from "./rendition-client";
import { variantFrom } from "./rendition-answers";

export const createRenditionTrimmer = (client: RenditionClient): Trimmer => ({
  name: "rendition",
  async trim(audio, call) {
    return variantFrom(await client.call("trim", audio, call), audio, "trim");
  },
});
