/**
 * RNNoise in WebAssembly: 48 kHz mono float samples, processed in 480-sample frames. RNNoise works on samples at
 * 16-bit scale, so they are scaled up on the way in and back down on the way out.
 */
import createRNNoise, { type RNNoiseModule } from "@echogarden/rnnoise-wasm";

export const rnnoiseSampleRate = 48_000;

let loaded: Promise<RNNoiseModule> | undefined;
// One instance per process: instantiating the WebAssembly costs more than denoising a short clip.
const rnnoiseModule = () => (loaded ??= createRNNoise());

/**
 * RNNoise only suppresses a noise once it has heard signal beside it: a clip's leading silence passes through
 * untouched (measured: -40 dBFS noise before a tone loses 1 dB, after it 35 dB). So the state is first primed on
 * the clip's opening seconds, their output discarded, then the whole clip is processed.
 */
export const primeSeconds = 10;

/** Returns a new array: the input with RNNoise applied; a last partial frame is zero-padded, then cut back. */
export async function suppressNoise(samples: Float32Array, prime = primeSeconds): Promise<Float32Array> {
  const rnnoise = await rnnoiseModule();
  const frame = rnnoise._rnnoise_get_frame_size();
  const state = rnnoise._rnnoise_create(0);
  const pointer = rnnoise._malloc(frame * 4);
  const output = new Float32Array(samples.length);
  try {
    const scratch = new Float32Array(frame);
    const primed = Math.min(samples.length, Math.round(prime * rnnoiseSampleRate));
    for (let offset = 0; offset < primed; offset += frame) {
      const count = Math.min(frame, primed - offset);
      for (let i = 0; i < frame; i++) scratch[i] = i < count ? samples[offset + i]! * 32768 : 0;
      rnnoise.HEAPF32.set(scratch, pointer >> 2);
      rnnoise._rnnoise_process_frame(state, pointer, pointer);
    }
    for (let offset = 0; offset < samples.length; offset += frame) {
      const count = Math.min(frame, samples.length - offset);
      for (let i = 0; i < frame; i++) scratch[i] = i < count ? samples[offset + i]! * 32768 : 0;
      // HEAPF32 is re-read every frame: a memory growth inside the module replaces the view.
      rnnoise.HEAPF32.set(scratch, pointer >> 2);
      rnnoise._rnnoise_process_frame(state, pointer, pointer);
      const heap = rnnoise.HEAPF32;
      for (let i = 0; i < count; i++) output[offset + i] = heap[(pointer >> 2) + i]! / 32768;
    }
  } finally {
    rnnoise._free(pointer);
    rnnoise._rnnoise_destroy(state);
  }
  return output;
}
