/**
 * `POST /v1/denoise`: RNNoise over each channel of the clip (decoded at 48 kHz, RNNoise's rate), re-encoded in the
 * upload's family with its channel count, which the loudness target depends on. The samples stream from the
 * decoder through RNNoise into the encoder, so memory stays the same however long the clip (a 25 MiB upload of
 * low-rate speech lasts hours, over 4 GiB as floats). The stored file is then decoded once: its duration and the
 * analysis PCM that a trim or waveform that follows reads, as what was stored (an AAC encoder pads its last frame).
 */
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { fetchBlob, storeContentAddressed } from "./blob-files";
import { decodeAnalysisPcm } from "./analysis-pcm";
import { audioOnly, encoderLayoutFilter, familyEncodings } from "./family-encoding";
import { typedInput } from "./ffmpeg-input";
import { channelOf, interleave, openFloatWav, type FloatWavStream } from "./float-wav";
import { pcmDurationMs } from "./pcm";
import { ffmpegRun, type RenditionContext, type RenditionOutput, type RenditionSource, sourceKey } from "./rendition-context";
import { createNoiseSuppressor, primeSeconds, rnnoiseSampleRate, type NoiseSuppressor } from "./rnnoise";
import { runFfmpeg } from "./run-ffmpeg";
import { withWorkspace } from "./temp-workspace";

export function denoiseAudio(context: RenditionContext, source: RenditionSource): Promise<RenditionOutput> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "source");
    await fetchBlob(context.store, sourceKey(source), input);
    // Either run failing stops the other: a decoder left writing into a pipe nobody reads would never exit.
    const stop = new AbortController();
    const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal;
    const decoded = new PassThrough();
    const decoding = runFfmpeg(
      context.ffmpeg,
      [...typedInput(input, source.mimeType), "-map", "0:a:0", "-map_metadata", "-1", "-ar", String(rnnoiseSampleRate), "-f", "wav", "-c:a", "pcm_f32le", "pipe:1"],
      { ...ffmpegRun(context, "decode-48k"), signal, stdoutTo: decoded },
    );
    decoding.catch(() => stop.abort());
    let wav: FloatWavStream;
    try {
      wav = await openFloatWav(decoded);
    } catch (error) {
      // The decoder's own failure (a clip ffmpeg cannot read) explains an empty stream better.
      await decoding;
      throw error;
    }

    const suppressors = await Promise.all(Array.from({ length: wav.channels }, () => createNoiseSuppressor()));
    const encoding = familyEncodings[source.mimeType];
    const output = join(dir, `denoised.${encoding.ext}`);
    // Raw samples carry no layout, and ffmpeg would guess its default for the count (2.1 for 3, 4.0 for 4), which
    // libopus refuses and the layout filter would then remix. Unguessed, that filter only labels the channels.
    const layout = encoderLayoutFilter(source.mimeType, wav.channels);
    const raw = ["-f", "f32le", "-ar", String(rnnoiseSampleRate), "-ac", String(wav.channels), ...(layout ? ["-guess_layout_max", "0"] : []), "-i", "pipe:0"];
    try {
      const encoded = runFfmpeg(context.ffmpeg, [...raw, ...(layout ? ["-af", layout] : []), ...audioOnly, ...encoding.args, output], {
        ...ffmpegRun(context, "denoise-encode"),
        signal,
        stdin: Readable.from(denoised(wav, suppressors)),
      });
      encoded.catch(() => stop.abort());
      await Promise.all([decoding, encoded]);
      const pcm = await decodeAnalysisPcm(context, output, source.mimeType, "denoise:decode");
      const stored = await storeContentAddressed(context.store, source.appId, output, source.mimeType);
      context.pcm.set(sourceKey({ appId: source.appId, cid: stored.cid }), pcm);
      return { cid: stored.cid, mimeType: source.mimeType, size: stored.size, durationMs: pcmDurationMs(pcm) };
    } finally {
      stop.abort();
      for (const suppressor of suppressors) suppressor.close();
    }
  });
}

/**
 * The clip's samples through one RNNoise state per channel, interleaved again as f32le bytes. The states are first
 * primed on the opening seconds (rnnoise.ts says why), which are held back until then.
 */
async function* denoised(wav: FloatWavStream, suppressors: NoiseSuppressor[]): AsyncGenerator<Buffer> {
  const { channels, samples } = wav;
  const through = (chunk: Float32Array, last = false) => {
    const planes = suppressors.map((suppressor, channel) => {
      const out = suppressor.push(channelOf(chunk, channels, channel));
      if (!last) return out;
      const tail = suppressor.flush();
      const joined = new Float32Array(out.length + tail.length);
      joined.set(out);
      joined.set(tail, out.length);
      return joined;
    });
    return interleave(planes);
  };
  const primeSamples = primeSeconds * rnnoiseSampleRate * channels;
  const opening: Float32Array[] = [];
  let held = 0;
  for await (const chunk of samples) {
    if (held >= primeSamples) {
      yield through(chunk);
      continue;
    }
    opening.push(chunk);
    held += chunk.length;
    if (held < primeSamples) continue;
    yield primedThrough(opening);
  }
  if (held < primeSamples) yield primedThrough(opening, true);
  else yield through(new Float32Array(0), true);

  function primedThrough(chunks: Float32Array[], last = false): Buffer {
    const all = new Float32Array(held);
    let at = 0;
    for (const chunk of chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    chunks.length = 0;
    suppressors.forEach((suppressor, channel) => suppressor.prime(channelOf(all.subarray(0, Math.min(all.length, primeSamples)), channels, channel)));
    return through(all, last);
  }
}
