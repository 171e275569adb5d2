/**
 * A local stand-in for the ElevenLabs API, speaking its documented protocol: `POST /v1/speech-to-text` (header
 * `xi-api-key`, multipart `file` + `model_id`) answering `{ language_code, text, words[{ text, start, end, type }] }`,
 * and `POST /v1/audio-isolation` (multipart `audio`) answering audio/mpeg bytes. Errors answer `{ detail }` as the API does.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import busboy from "busboy";

export interface SeenRequest {
  path: string;
  apiKey?: string;
  fields: Record<string, string>;
  files: Record<string, { size: number; mimeType: string }>;
}

export type FakeAnswer = { status: number; json?: unknown; bytes?: Buffer; delayMs?: number; headers?: Record<string, string> };

export interface FakeElevenLabs {
  url: string;
  apiKey: string;
  seen: SeenRequest[];
  /** Answers queued for the next requests (then the default answer). */
  queue: FakeAnswer[];
  close(): Promise<void>;
}

export const sampleSpeech = {
  language_code: "eng",
  language_probability: 0.98,
  text: "Hello there. This is a test",
  words: [
    { text: "Hello", start: 0.1, end: 0.5, type: "word", logprob: -0.1 },
    { text: " ", start: 0.5, end: 0.6, type: "spacing", logprob: 0 },
    { text: "there.", start: 0.6, end: 1.0, type: "word", logprob: -0.1 },
    { text: " ", start: 1.0, end: 1.2, type: "spacing", logprob: 0 },
    { text: "(laughs)", start: 1.2, end: 1.5, type: "audio_event", logprob: 0 },
    { text: "This", start: 1.5, end: 1.7, type: "word", logprob: -0.1 },
    { text: " ", start: 1.7, end: 1.75, type: "spacing", logprob: 0 },
    { text: "is", start: 1.75, end: 1.9, type: "word", logprob: -0.1 },
    { text: " ", start: 1.9, end: 1.95, type: "spacing", logprob: 0 },
    { text: "a", start: 1.95, end: 2.0, type: "word", logprob: -0.1 },
    { text: " ", start: 2.0, end: 2.05, type: "spacing", logprob: 0 },
    { text: "test", start: 2.05, end: 2.4, type: "word", logprob: -0.1 },
  ],
};

export async function startFakeElevenLabs(options: { isolated: Buffer; apiKey?: string }): Promise<FakeElevenLabs> {
  const apiKey = options.apiKey ?? "fake-elevenlabs-key-0123456789";
  const seen: SeenRequest[] = [];
  const queue: FakeAnswer[] = [];
  const server: Server = createServer((req, res) => {
    const request: SeenRequest = { path: req.url ?? "/", apiKey: req.headers["xi-api-key"] as string | undefined, fields: {}, files: {} };
    const answer = async () => {
      seen.push(request);
      const queued = queue.shift();
      let reply: FakeAnswer;
      if (queued) reply = queued;
      else if (request.apiKey !== apiKey) reply = { status: 401, json: { detail: { status: "invalid_api_key", message: "Invalid API key" } } };
      else if (req.method !== "POST") reply = { status: 405, json: { detail: "Method Not Allowed" } };
      else if (request.path === "/v1/speech-to-text") {
        reply = request.files.file && request.fields.model_id
          ? { status: 200, json: sampleSpeech }
          : { status: 422, json: { detail: [{ loc: ["body", "file"], msg: "field required", type: "value_error.missing" }] } };
      } else if (request.path === "/v1/audio-isolation") {
        reply = request.files.audio ? { status: 200, bytes: options.isolated, headers: { "Content-Type": "audio/mpeg" } } : { status: 422, json: { detail: "audio required" } };
      } else reply = { status: 404, json: { detail: "Not Found" } };
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return;
      if (reply.bytes) {
        res.writeHead(reply.status, { "Content-Type": "audio/mpeg", ...reply.headers });
        res.end(reply.bytes);
      } else {
        res.writeHead(reply.status, { "Content-Type": "application/json", ...reply.headers });
        res.end(typeof reply.json === "string" ? reply.json : JSON.stringify(reply.json ?? {}));
      }
    };
    if (!(req.headers["content-type"] ?? "").startsWith("multipart/form-data")) {
      req.resume();
      req.on("end", () => void answer());
      return;
    }
    const parser = busboy({ headers: req.headers });
    parser.on("field", (name, value) => (request.fields[name] = value));
    parser.on("file", (name, stream, info) => {
      let size = 0;
      stream.on("data", (chunk: Buffer) => (size += chunk.length));
      stream.on("end", () => (request.files[name] = { size, mimeType: info.mimeType }));
    });
    parser.on("close", () => void answer());
    req.pipe(parser);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    seen,
    queue,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
