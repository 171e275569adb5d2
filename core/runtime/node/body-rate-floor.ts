/**
 * A request body must keep up an average rate while it arrives (docs/decisions.md#playback-and-upload): the idle
 * timeout only catches a body that stops, so one that trickles a byte every few seconds would otherwise hold its
 * connection (and its staging file) until Node's five-minute request timeout.
 */
import type { IncomingMessage } from "node:http";
import { PassThrough, type Readable } from "node:stream";

export interface BodyRateFloor {
  /** Bytes per second the body must average over each window; 0 switches the floor off. */
  minBytesPerSecond: number;
  windowMs: number;
}

export class BodyTooSlowError extends Error {
  constructor(floor: BodyRateFloor) {
    super(`the request body arrived slower than ${floor.minBytesPerSecond} bytes per second over ${floor.windowMs} ms`);
    this.name = "BodyTooSlowError";
  }
}

/**
 * The body as its route reads it, and whether the floor cut it off. Each window the socket's received bytes are
 * compared with the floor; a window in which the reader held the body back (backpressure from a slow store) is
 * ours, not the client's, and does not count. Cut off, the reader's stream fails with BodyTooSlowError (so an
 * upload discards its staging file) and the request is answered 400 with the connection closed.
 */
export const bodyWithRateFloor = (incoming: IncomingMessage, floor: BodyRateFloor): { body(): Readable; bodyTooSlow(): boolean } => {
  let cut = false;
  if (floor.minBytesPerSecond <= 0) return { body: () => incoming, bodyTooSlow: () => false };
  return {
    bodyTooSlow: () => cut,
    body() {
      const body = new PassThrough();
      incoming.pipe(body);
      // pipe() carries bytes only: a client that goes away (or the idle timeout) must still fail the reader.
      const gone = (error?: Error) => {
        if (!incoming.complete && !body.destroyed) body.destroy(error ?? new Error("aborted"));
      };
      incoming.once("error", gone);
      incoming.once("close", () => gone());
      const socket = incoming.socket;
      const minBytes = (floor.minBytesPerSecond * floor.windowMs) / 1000;
      let windowStart = socket.bytesRead;
      let heldBack = false;
      const onPause = () => (heldBack = true);
      incoming.on("pause", onPause);
      const timer = setInterval(() => {
        const received = socket.bytesRead - windowStart;
        const ours = heldBack || incoming.isPaused();
        windowStart = socket.bytesRead;
        heldBack = false;
        if (ours || received >= minBytes) return;
        cut = true;
        stop();
        incoming.unpipe(body);
        incoming.pause();
        body.destroy(new BodyTooSlowError(floor));
      }, floor.windowMs);
      const stop = () => {
        clearInterval(timer);
        incoming.off("pause", onPause);
      };
      incoming.once("end", stop);
      incoming.once("close", stop);
      return body;
    },
  };
};
