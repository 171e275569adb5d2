/**
 * `POST /v1/denoise`: RNNoise over each channel of the clip (decoded at 48 kHz, RNNoise's rate), re-encoded in the
 * upload's family with its channel count, which the loudness target depends on. The encode run also writes the
 * analysis PCM of the result, so a trim or waveform that follows decodes nothing.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { fetchBlob, storeContentAddressed } from "./blob-files";
import { audioOnly, familyEncodings } from "./family-encoding";
import { analysisPcmOutput, pcmFromBytes } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionOutput, type RenditionSource, sourceKey } from "./rendition-context";
import { rnnoiseSampleRate, suppressNoise } from "./rnnoise";
import { runFfmpeg } from "./run-ffmpeg";
import { interleave, splitFloatWav } from "./float-wav";
import { withWorkspace } from "./temp-workspace";

export function denoiseAudio(context: RenditionContext, source: RenditionSource): Promise<RenditionOutput> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "source");
    await fetchBlob(context.store, sourceKey(source), input);
    const decoded = await runFfmpeg(
      context.ffmpeg,
      ["-i", input, "-map", "0:a:0", "-map_metadata", "-1", "-ar", String(rnnoiseSampleRate), "-f", "wav", "-c:a", "pcm_f32le", "pipe:1"],
      { ...ffmpegRun(context, "decode-48k"), collectStdout: true },
    );
    // Each channel has its own RNNoise state, as ffmpeg's arnndn keeps one per channel.
    const clean: Float32Array[] = [];
    for (const plane of splitFloatWav(decoded)) clean.push(await suppressNoise(plane));

    const encoding = familyEncodings[source.mimeType];
    const output = join(dir, `denoised.${encoding.ext}`);
    const raw = ["-f", "f32le", "-ar", String(rnnoiseSampleRate), "-ac", String(clean.length), "-i", "pipe:0"];
    const stdout = await runFfmpeg(context.ffmpeg, [...raw, ...audioOnly, ...encoding.args, output, ...analysisPcmOutput], {
      stdin: Readable.from([interleave(clean)]),
      ...ffmpegRun(context, "denoise-encode"),
      collectStdout: true,
    });
    const stored = await storeContentAddressed(context.store, source.appId, output, source.mimeType);
    context.pcm.set(sourceKey({ appId: source.appId, cid: stored.cid }), pcmFromBytes(stdout));
    return {
      cid: stored.cid,
      mimeType: source.mimeType,
      size: stored.size,
      durationMs: Math.round((clean[0]!.length * 1000) / rnnoiseSampleRate),
    };
  });
}
