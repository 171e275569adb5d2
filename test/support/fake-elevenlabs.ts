/**
 * A local stand-in for the ElevenLabs API, speaking its documented protocol: `POST /v1/speech-to-text` (header
 * `xi-api-key`, multipart `file` + `model_id`) answering `{ language_code, text, words[{ text, start, end, type, speaker_id, logprob }] }`,
 * and `POST /v1/audio-isolation` (multipart `audio`) answering audio/mpeg bytes. Errors answer `{ detail }` as the API does.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Busboy } from "@fastify/busboy";

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

/**
 * A conversation as the API documents its answer: ISO 639-3 `language_code`, and `words` of type word (punctuation
 * inside the word's text), spacing and audio_event, each with `start`/`end` in seconds, `speaker_id` (null unless
 * `diarize=true` was asked), `logprob` and `characters` (null unless character timestamps were asked).
 */
export const sampleSpeechWords = [
  ["Hello", 0.1, 0.5, "word", "speaker_0", -0.01],
  [" ", 0.5, 0.6, "spacing", "speaker_0", 0],
  ["there,", 0.6, 0.9, "word", "speaker_0", -0.05],
  [" ", 0.9, 0.95, "spacing", "speaker_0", 0],
  ["how", 0.95, 1.1, "word", "speaker_0", -0.02],
  [" ", 1.1, 1.15, "spacing", "speaker_0", 0],
  ["are", 1.15, 1.3, "word", "speaker_0", -0.02],
  [" ", 1.3, 1.35, "spacing", "speaker_0", 0],
  ["you?", 1.35, 1.6, "word", "speaker_0", -0.1],
  [" ", 1.6, 1.7, "spacing", "speaker_1", 0],
  ["(laughter)", 1.7, 2.2, "audio_event", "speaker_1", 0],
  [" ", 2.2, 2.3, "spacing", "speaker_1", 0],
  ["I'm", 2.3, 2.5, "word", "speaker_1", -0.2],
  [" ", 2.5, 2.55, "spacing", "speaker_1", 0],
  ["fine", 2.55, 2.8, "word", "speaker_1", -0.03],
  [" ", 2.8, 2.85, "spacing", "speaker_1", 0],
  ["thanks", 2.85, 3.2, "word", "speaker_1", -0.7],
  [" ", 3.2, 3.4, "spacing", "speaker_0", 0],
  ["Good.", 3.4, 3.8, "word", "speaker_0", -0.01],
] as const;

export const sampleSpeech = (diarize: boolean) => ({
  language_code: "eng",
  language_probability: 0.98,
  text: "Hello there, how are you? (laughter) I'm fine thanks Good.",
  words: sampleSpeechWords.map(([text, start, end, type, speaker, logprob]) => ({
    text,
    start,
    end,
    type,
    speaker_id: diarize ? speaker : null,
    logprob,
    characters: null,
  })),
});

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
          ? { status: 200, json: sampleSpeech(request.fields.diarize === "true") }
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
    const parser = new Busboy({ headers: req.headers as { "content-type": string } });
    parser.on("field", (name, value) => (request.fields[name] = value));
    parser.on("file", (name, stream, _filename, _encoding, mimeType) => {
      let size = 0;
      stream.on("data", (chunk: Buffer) => (size += chunk.length));
      stream.on("end", () => (request.files[name] = { size, mimeType }));
    });
    parser.on("finish", () => void answer());
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
