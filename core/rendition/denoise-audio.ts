/**
 * `POST /v1/denoise`: RNNoise over the clip (decoded to 48 kHz mono), re-encoded in the upload's family. The encode
 * run also writes the analysis PCM of the result, so a trim or waveform that follows decodes nothing.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { fetchBlob, storeContentAddressed } from "./blob-files";
import { audioOnly, familyEncodings } from "./family-encoding";
import { analysisPcmOutput, pcmFromBytes } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionOutput, type RenditionSource, sourceKey } from "./rendition-context";
import { rnnoiseSampleRate, suppressNoise } from "./rnnoise";
import { runFfmpeg } from "./run-ffmpeg";
import { withWorkspace } from "./temp-workspace";

const float32 = (bytes: Buffer) => {
  const copy = new Uint8Array(bytes.length - (bytes.length % 4));
  copy.set(bytes.subarray(0, copy.length));
  return new Float32Array(copy.buffer);
};

export function denoiseAudio(context: RenditionContext, source: RenditionSource): Promise<RenditionOutput> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "source");
    await fetchBlob(context.store, sourceKey(source), input);
    const decoded = await runFfmpeg(
      context.ffmpeg,
      ["-i", input, "-map", "0:a:0", "-ac", "1", "-ar", String(rnnoiseSampleRate), "-f", "f32le", "-c:a", "pcm_f32le", "pipe:1"],
      { ...ffmpegRun(context, "decode-48k"), collectStdout: true },
    );
    const clean = await suppressNoise(float32(decoded));

    const encoding = familyEncodings[source.mimeType];
    const output = join(dir, `denoised.${encoding.ext}`);
    const raw = ["-f", "f32le", "-ar", String(rnnoiseSampleRate), "-ac", "1", "-i", "pipe:0"];
    const stdout = await runFfmpeg(context.ffmpeg, [...raw, ...audioOnly, ...encoding.args, output, ...analysisPcmOutput], {
      stdin: Readable.from([Buffer.from(clean.buffer, clean.byteOffset, clean.byteLength)]),
      ...ffmpegRun(context, "denoise-encode"),
      collectStdout: true,
    });
    const stored = await storeContentAddressed(context.store, source.appId, output, source.mimeType);
    context.pcm.set(sourceKey({ appId: source.appId, cid: stored.cid }), pcmFromBytes(stdout));
    return {
      cid: stored.cid,
      mimeType: source.mimeType,
      size: stored.size,
      durationMs: Math.round((clean.length * 1000) / rnnoiseSampleRate),
    };
  });
}
