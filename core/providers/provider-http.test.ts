/**
 * A provider's answer is read into memory only up to a bound: past it the body is cancelled unread and the call
 * fails (`fail`, `provider_error`), for the ElevenLabs adapters, the Transcribe transcript file and the rendition
 * client alike (they share provider-http.ts's reader).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobKey } from "../blobs/blob-key";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { rawCid } from "../blobs/raw-cid";
import { maxIsolatedBytes } from "./elevenlabs/elevenlabs-denoiser";
import { createElevenLabsTranscriber } from "./elevenlabs/elevenlabs-transcriber";
import { maxAnswerBytes, providerFetch, readBody } from "./provider-http";
import { type AudioRef, ProviderError } from "./provider-port";
import { createRenditionClient } from "./rendition/rendition-client";

const MiB = 1024 * 1024;
const fullBody = 512 * MiB;
const call = () => ({ signal: new AbortController().signal, deadline: Date.now() + 20_000 });

const failure = async (promise: Promise<unknown>): Promise<ProviderError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
};

/** Streams `fullBody` bytes of JSON whitespace with the given status, as fast as the reader takes them, counting them. */
let status = 200;
let sent: Promise<number>;
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    sent = new Promise((resolve) => {
      let count = 0;
      res.on("close", () => resolve(count));
      req.on("end", () => {
        res.writeHead(status, { "content-type": "application/json" });
        const chunk = Buffer.alloc(MiB, 0x20);
        const pump = () => {
          while (!res.destroyed && count < fullBody) {
            count += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        pump();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

describe("an answer larger than the bound", () => {
  it("is refused (fail, provider_error) by the reader, which stops pulling the body once past the bound", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 * MiB) return controller.close();
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const error = await failure(readBody("test provider", new Response(body), call(), MiB));
    expect(error).toMatchObject({ disposition: "fail", reason: "provider_error", message: `test provider: answer larger than ${MiB} bytes` });
    expect(pulled).toBeLessThan(2 * MiB);
    // A declared length over the bound is refused before any of it is read.
    const declared = new Response("{}", { headers: { "content-length": String(MiB + 1) } });
    expect(await failure(readBody("test provider", declared, call(), MiB))).toMatchObject({ disposition: "fail" });
  });

  it("from ElevenLabs speech-to-text fails (fail, provider_error) without the whole answer being sent", async () => {
    const dir = await mkdtemp(join(tmpdir(), "provider-http-test-"));
    try {
      const blobs = createFsBlobStore(dir);
      const bytes = Buffer.from("RIFF....WAVEfmt fake");
      const audio: AudioRef = { appId: "demo", cid: rawCid(bytes), mimeType: "audio/wav", size: bytes.length, durationMs: 1000 };
      await blobs.writeAtomic(blobKey("demo", audio.cid), Readable.from([bytes]));
      status = 200;
      const transcriber = createElevenLabsTranscriber({ baseUrl: base, apiKey: "xi-test-key", blobs });
      const error = await failure(transcriber.transcribe(audio, call()));
      expect(error).toMatchObject({ disposition: "fail", reason: "provider_error", message: `elevenlabs speech-to-text: answer larger than ${maxAnswerBytes} bytes` });
      expect(await sent).toBeLessThan(maxAnswerBytes + 32 * MiB);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("from the rendition service fails (fail, provider_error) without the whole answer being sent; an error answer is read with the same bound", async () => {
    const client = createRenditionClient({ baseUrl: base, token: "t".repeat(40) });
    const source = { appId: "demo", cid: rawCid(Buffer.from("a")), mimeType: "audio/wav" as const };
    status = 200;
    const error = await failure(client.call("waveform", source, call()));
    expect(error).toMatchObject({ disposition: "fail", reason: "provider_error", message: `rendition waveform: answer larger than ${maxAnswerBytes} bytes` });
    expect(await sent).toBeLessThan(maxAnswerBytes + 32 * MiB);
    status = 503;
    expect(await failure(client.call("waveform", source, call()))).toMatchObject({ disposition: "retry", message: "rendition waveform: HTTP 503" });
    expect(await sent).toBeLessThan(maxAnswerBytes + 32 * MiB);
  });

  it("an isolated answer of an hour of mp3 at its highest bitrate (320 kbit/s) fits the audio-isolation bound", () => {
    expect(maxIsolatedBytes).toBeGreaterThanOrEqual(3600 * (320_000 / 8));
  });
});

describe("a provider's refusal with Retry-After", () => {
  /** Answers every request with `answer`'s status and headers, and no body. */
  const serving = async (answer: { status: number; headers: Record<string, string> }, use: (url: string) => Promise<void>) => {
    const refusing = createServer((req, res) => req.resume().on("end", () => res.writeHead(answer.status, answer.headers).end()));
    await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", r));
    try {
      await use(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}`);
    } finally {
      refusing.closeAllConnections();
      await new Promise<void>((r) => refusing.close(() => r()));
    }
  };

  it("a 429 or 503 is a retry carrying the provider's wait; a 400's Retry-After is no hint, since no retry can fix it", async () => {
    await serving({ status: 429, headers: { "retry-after": "40" } }, async (url) => {
      const error = await failure(providerFetch("elevenlabs", url, { method: "POST" }, call()));
      expect([error.disposition, error.retryAfterMs]).toEqual(["retry", 40_000]);
    });
    await serving({ status: 503, headers: { "retry-after": "7" } }, async (url) => {
      const error = await failure(createRenditionClient({ baseUrl: url, token: "t".repeat(32) }).call("trim", { appId: "alpha", cid: "bafkreia", mimeType: "audio/wav" }, call()));
      expect([error.disposition, error.retryAfterMs]).toEqual(["retry", 7_000]);
    });
    await serving({ status: 400, headers: { "retry-after": "40" } }, async (url) => {
      const error = await failure(providerFetch("elevenlabs", url, { method: "POST" }, call()));
      expect([error.disposition, error.retryAfterMs]).toEqual(["fail", undefined]);
    });
    await serving({ status: 429, headers: {} }, async (url) => {
      expect((await failure(providerFetch("elevenlabs", url, { method: "POST" }, call()))).retryAfterMs).toBeUndefined();
    });
  });
});
