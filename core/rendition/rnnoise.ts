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

/** One channel's RNNoise state, fed as the samples arrive: memory stays one frame, however long the clip. */
export interface NoiseSuppressor {
  /** Runs `samples` through the state and discards the output (the opening seconds, before the clip itself). */
  prime(samples: Float32Array): void;
  /** The denoised samples of every whole frame so far; a partial frame waits for the next push or `flush`. */
  push(samples: Float32Array): Float32Array;
  /** The last partial frame, zero-padded through RNNoise and cut back to its length. */
  flush(): Float32Array;
  close(): void;
}

export async function createNoiseSuppressor(): Promise<NoiseSuppressor> {
  const rnnoise = await rnnoiseModule();
  const frame = rnnoise._rnnoise_get_frame_size();
  const state = rnnoise._rnnoise_create(0);
  const pointer = rnnoise._malloc(frame * 4);
  const scratch = new Float32Array(frame);
  let waiting = new Float32Array(0);

  /** One frame through the state (`count` real samples, zero-padded); its output into `into` at `at`, when given. */
  const run = (samples: Float32Array, from: number, count: number, into?: Float32Array, at = 0) => {
    for (let i = 0; i < frame; i++) scratch[i] = i < count ? samples[from + i]! * 32768 : 0;
    // HEAPF32 is re-read every frame: a memory growth inside the module replaces the view.
    rnnoise.HEAPF32.set(scratch, pointer >> 2);
    rnnoise._rnnoise_process_frame(state, pointer, pointer);
    if (!into) return;
    const heap = rnnoise.HEAPF32;
    for (let i = 0; i < count; i++) into[at + i] = heap[(pointer >> 2) + i]! / 32768;
  };

  return {
    prime(samples) {
      for (let offset = 0; offset < samples.length; offset += frame) run(samples, offset, Math.min(frame, samples.length - offset));
    },
    push(samples) {
      const all = waiting.length === 0 ? samples : concat(waiting, samples);
      const whole = all.length - (all.length % frame);
      const output = new Float32Array(whole);
      for (let offset = 0; offset < whole; offset += frame) run(all, offset, frame, output, offset);
      waiting = all.slice(whole);
      return output;
    },
    flush() {
      const output = new Float32Array(waiting.length);
      if (waiting.length > 0) run(waiting, 0, waiting.length, output, 0);
      waiting = new Float32Array(0);
      return output;
    },
    close() {
      rnnoise._free(pointer);
      rnnoise._rnnoise_destroy(state);
    },
  };
}

const concat = (a: Float32Array, b: Float32Array) => {
  const joined = new Float32Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
};
