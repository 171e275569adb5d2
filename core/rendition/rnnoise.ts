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
 * the clip's opening seconds, their output discarded, then the whole clip is processed. They are played backwards,
 * ending on the clip's first sample: what the state heard last leads into the clip as its own past would. Primed
 * forwards, the opening's last frame (the tone at 10 s) leaked into the clip's first 10 ms at -21 dBFS.
 */
export const primeSeconds = 10;

/** One channel's RNNoise state, fed as the samples arrive: memory stays one frame, however long the clip. */
export interface NoiseSuppressor {
  /** Runs `samples` backwards through the state and discards the output (the opening seconds, before the clip itself). */
  prime(samples: Float32Array): void;
  /** The denoised samples so far, one frame behind what was pushed (RNNoise's latency); the rest waits for `flush`. */
  push(samples: Float32Array): Float32Array;
  /** The rest: as many samples in all as were pushed, each at its own position. */
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
  // rnnoise_process_frame answers each frame with the one before it: the first output of the clip is the last primed
  // frame's (a burst at the start), and the clip's own samples come out one frame late. That frame is dropped, and
  // `flush` runs one more frame of zeros to bring out the last of them.
  let latency = frame;
  /** Samples pushed and not yet answered. */
  let owed = 0;

  /** One frame of `samples` from `from` through the state; its output into `into` at `from`, when given. */
  const run = (samples: Float32Array, from: number, into?: Float32Array) => {
    for (let i = 0; i < frame; i++) scratch[i] = samples[from + i]! * 32768;
    // HEAPF32 is re-read every frame: a memory growth inside the module replaces the view.
    rnnoise.HEAPF32.set(scratch, pointer >> 2);
    rnnoise._rnnoise_process_frame(state, pointer, pointer);
    if (!into) return;
    const heap = rnnoise.HEAPF32;
    for (let i = 0; i < frame; i++) into[from + i] = heap[(pointer >> 2) + i]! / 32768;
  };

  /** Every whole frame of what waits and `samples` through the state, less the latency still to drop. */
  const through = (samples: Float32Array) => {
    const all = waiting.length === 0 ? samples : concat(waiting, samples);
    const whole = all.length - (all.length % frame);
    const output = new Float32Array(whole);
    for (let offset = 0; offset < whole; offset += frame) run(all, offset, output);
    waiting = all.slice(whole);
    const dropped = Math.min(latency, whole);
    latency -= dropped;
    return output.subarray(dropped);
  };

  return {
    prime(samples) {
      // Zeros (if any) before, not after: the last frame heard ends on the clip's first sample.
      const pad = (frame - (samples.length % frame)) % frame;
      const backwards = new Float32Array(pad + samples.length);
      for (let i = 0; i < samples.length; i++) backwards[pad + i] = samples[samples.length - 1 - i]!;
      for (let offset = 0; offset < backwards.length; offset += frame) run(backwards, offset);
    },
    push(samples) {
      owed += samples.length;
      const output = through(samples);
      owed -= output.length;
      return output;
    },
    flush() {
      // Zeros to finish the partial frame, and one frame more for the latency.
      const output = through(new Float32Array(frame + ((frame - waiting.length) % frame))).slice(0, owed);
      owed = 0;
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
