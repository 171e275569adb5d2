/**
 * The `rendition` trimmer: `/v1/trim` on the rendition service; the variant is stored in the shared blob store. When
 * normalize follows, the service measures the variant's loudness while writing it, and normalize starts from that.
 */
import type { Trimmer } from "../provider-port";
import type { RenditionClient } from "./rendition-client";
import { variantFrom } from "./rendition-answers";

export const createRenditionTrimmer = (client: RenditionClient): Trimmer => ({
  name: "rendition",
  async trim(audio, call) {
    const measureOutput = call.then?.includes("normalize") === true;
    return variantFrom(await client.call("trim", audio, { signal: call.signal, deadline: call.deadline, measureOutput }), audio, "trim");
  },
});
