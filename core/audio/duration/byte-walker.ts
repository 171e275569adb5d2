/**
 * A push parser's cursor over a stream of chunks: each step reads n bytes (handed over contiguous, copied only
 * when they straddle chunks) or skips n bytes, then names the next step. Skipping costs nothing per byte, so a
 * container parser touches only headers while the bytes themselves stream past to the hash and the store.
 */
export type Step =
  | { readonly n: number; readonly read: true; readonly then: (bytes: Buffer, at: number) => Step | undefined }
  | { readonly n: number; readonly read: false; readonly then: (at: number) => Step | undefined };

/** Reads `n` bytes starting at absolute offset `at`, then continues with what `then` returns (undefined: stop). */
export const read = (n: number, then: (bytes: Buffer, at: number) => Step | undefined): Step => ({ n, read: true, then });

/**
 * Skips `n` bytes, then continues with `then(at)`, `at` being where the skip began. Pass a function made once, not
 * a fresh closure per step: walkers take a step per frame or block.
 */
export const skip = (n: number, then: (at: number) => Step | undefined): Step => ({ n, read: false, then });

const empty = Buffer.alloc(0);

/** A length read from the bytes may be anything: a step that is no whole non-negative count stops the walk. */
const valid = (step: Step | undefined) => (step && Number.isSafeInteger(step.n) && step.n >= 0 ? step : undefined);

export class ByteWalker {
  /** Absolute offset of the next byte the current step consumes. */
  private offset = 0;
  private stepStart = 0;
  private remaining: number;
  private parts: Buffer[] = [];

  private step: Step | undefined;

  constructor(first: Step | undefined) {
    this.step = valid(first);
    this.remaining = this.step?.n ?? 0;
    this.settleEmpty();
  }

  /** Whether the parser has stopped (finished, or found something it will not read past). */
  get done(): boolean {
    return this.step === undefined;
  }

  push(chunk: Buffer): void {
    let pos = 0;
    while (this.step && pos < chunk.length) {
      const step = this.step;
      const take = Math.min(this.remaining, chunk.length - pos);
      if (step.read) {
        if (take === step.n) {
          // The whole read lies in this chunk: no copy.
          this.advance(chunk.subarray(pos, pos + take), take);
          pos += take;
          continue;
        }
        this.parts.push(chunk.subarray(pos, pos + take));
      }
      pos += take;
      this.offset += take;
      this.remaining -= take;
      if (this.remaining === 0) {
        const bytes = step.read ? Buffer.concat(this.parts) : empty;
        this.parts = [];
        this.next(step, bytes);
      }
    }
    // Parts kept for a read that continues in the next chunk must not alias a buffer the producer may reuse.
    if (this.parts.length > 0) this.parts = [Buffer.concat(this.parts)];
  }

  private advance(bytes: Buffer, taken: number) {
    this.offset += taken;
    this.remaining = 0;
    this.next(this.step!, bytes);
  }

  private next(step: Step, bytes: Buffer) {
    const at = this.stepStart;
    this.stepStart = this.offset;
    this.step = valid(step.read ? step.then(bytes, at) : step.then(at));
    this.remaining = this.step?.n ?? 0;
    this.settleEmpty();
  }

  /** Zero-length steps complete at once. */
  private settleEmpty() {
    while (this.step && this.remaining === 0) {
      const step = this.step;
      this.stepStart = this.offset;
      this.step = valid(step.read ? step.then(empty, this.offset) : step.then(this.offset));
      this.remaining = this.step?.n ?? 0;
    }
  }
}
