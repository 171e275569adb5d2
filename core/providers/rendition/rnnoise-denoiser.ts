/** The `rnnoise` denoiser (explicit only): RNNoise runs in the rendition service (`/v1/denoise`), output in the upload's family. */
import type { Denoiser } from "../provider-port";
import type { RenditionClient } from "./rendition-client";
import { variantFrom } from "./rendition-answers";

export const createRnnoiseDenoiser = (client: RenditionClient): Denoiser => ({
  name: "rnnoise",
  async denoise(audio, call) {
    return variantFrom(await client.call("denoise", audio, call), audio, "denoise");
  },
});
