/** `POST /v1/waveform`: the BBC JSON v2 waveform of a blob, made beside its analysis PCM (cached, or one decode). */
import type { Waveform } from "../records/stage-outputs";
import { analysisPcm } from "./analysis-pcm";
import type { RenditionContext, RenditionSource } from "./rendition-context";
import { withWorkspace } from "./temp-workspace";

export function waveformAudio(context: RenditionContext, source: RenditionSource): Promise<Waveform> {
  return withWorkspace(async (dir) => (await analysisPcm(context, source, dir)).waveform);
}
