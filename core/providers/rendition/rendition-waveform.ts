/** The `rendition` waveform maker: `/v1/waveform` on the rendition service (BBC JSON v2, 8 bits, 20 points a second). */
import type { WaveformMaker } from "../provider-port";
import type { RenditionClient } from "./rendition-client";
import { waveformFrom } from "./rendition-answers";

export const createRenditionWaveformMaker = (client: RenditionClient): WaveformMaker => ({
  name: "rendition",
  async waveform(audio, call) {
    return waveformFrom(await client.call("waveform", audio, call));
  },
});
