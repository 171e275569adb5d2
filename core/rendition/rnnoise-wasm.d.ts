/** The parts of the Emscripten module `@echogarden/rnnoise-wasm` exports that the denoiser uses. */
declare module "@echogarden/rnnoise-wasm" {
  export interface RNNoiseModule {
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    _rnnoise_get_frame_size(): number;
    _rnnoise_process_frame(state: number, out: number, input: number): number;
  }
  const createRNNoise: (options?: object) => Promise<RNNoiseModule>;
  export default createRNNoise;
}
