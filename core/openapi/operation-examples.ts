/**
 * One worked example per public operation, for the description and so the reference page: the request (parameters
 * and body) and the answer's `data`, as the README's walkthrough meets them on `npm start` with local.env (the demo
 * tenant, alice and bob). A test parses each against the route's own schemas, so an example cannot drift from them.
 */
import { sampleServiceUrl } from "../audio/upload-examples";

export interface OperationExample {
  /** Path and query parameters, by name. */
  parameters?: Readonly<Record<string, string>>;
  /** The JSON body. */
  body?: unknown;
  /** The success answer's `data` (or, for a route that answers raw, its body). */
  answer?: unknown;
}

const did = "did:web:localhost%3A3000";
const promptId = "3n3abwcd74ksb";
const replyId = "3n3abwd3od2sb";
const promptUri = `at://${did}/dev.svc.audio.post/${promptId}`;
const promptCid = "bafyreie7lpcayzbof2a2pf4msoz3lokntcwekxw3zvzmgwcipla2cyqcuy";
const audioCid = "bafkreib2nmkpoxebzux3d6nw6ukhqx5s7wlfn2fm2qftfznvlengfj7zne";
const exp = "1795721400";
const sig = "CX_u8jWk6JkFohRUK19PluWT7SrHk7pWNk0XlLmzuf0";

const blob = { $type: "blob", ref: { $link: audioCid }, mimeType: "audio/mpeg", size: 24468 };
const updatedAt = "2026-11-26T18:18:32.158Z";

const prompt = {
  uri: promptUri,
  cid: promptCid,
  kind: "prompt",
  authorId: "alice",
  record: {
    $type: "dev.svc.audio.post",
    text: "What did you learn today?",
    createdAt: "2026-11-26T18:18:31.902Z",
    embed: { $type: "dev.svc.embed.audio", audio: blob },
    processing: { transcribe: true, waveform: true },
  },
  embed: {
    $type: "dev.svc.embed.audio#view",
    url: `${sampleServiceUrl}/api/v1/audio?url=blobs/demo/${audioCid}&exp=${exp}&sig=${sig}`,
    mimeType: "audio/mpeg",
    size: 24468,
    durationMs: 3000,
    transcript: {
      text: "Looping a clip.",
      lang: "en",
      segments: [
        {
          startMs: 0,
          endMs: 1500,
          text: "Looping a clip.",
          speaker: "speaker_0",
          words: [
            { text: "Looping", startMs: 0, endMs: 600, confidence: 980 },
            { text: "a", startMs: 650, endMs: 750, confidence: 990 },
            { text: "clip.", startMs: 800, endMs: 1500, confidence: 970 },
          ],
        },
      ],
    },
    waveform: { version: 2, channels: 1, sample_rate: 8000, samples_per_pixel: 6000, bits: 8, length: 4, data: [-12, 14, -60, 58, -61, 60, -20, 18] },
  },
  viewer: { isAuthor: true, canReply: true },
  processing: { transcribe: { status: "ready", updatedAt }, waveform: { status: "ready", updatedAt } },
};

const reply = {
  uri: `at://${did}/dev.svc.audio.post/${replyId}`,
  cid: "bafyreih4gu2dmnlaqtb7xrzgo3qqxg5s3aepa2zbtvxx5xqphx3uafkwxu",
  kind: "reply",
  authorId: "bob",
  record: {
    $type: "dev.svc.audio.post",
    text: "How to loop a clip",
    createdAt: "2026-11-26T18:18:33.410Z",
    reply: { root: { uri: promptUri, cid: promptCid }, parent: { uri: promptUri, cid: promptCid } },
  },
};

export const operationExamples: Readonly<Record<string, OperationExample>> = {
  "create-post": {
    body: { text: "What did you learn today?", embed: { $type: "dev.svc.embed.audio", audio: blob }, processing: { transcribe: true, waveform: true } },
    answer: { postId: promptId },
  },
  "list-posts": { parameters: { kind: "prompt", limit: "20" }, answer: { items: [prompt], nextCursor: null } },
  "get-post": { parameters: { postId: promptId }, answer: prompt },
  "patch-post": { parameters: { postId: promptId }, body: { processing: { transcribe: true, waveform: true } }, answer: prompt },
  "list-replies": { parameters: { postId: promptId, limit: "20" }, answer: { items: [reply], nextCursor: null } },
  "upload-audio": { answer: { blob } },
  "create-upload": {
    body: { mimeType: "audio/mpeg", size: 24468 },
    answer: {
      uploadId: "0b6f3c1e-6a52-4b8f-9a51-3d2f1c9e7a40",
      url: "https://svc-prod-blobs.s3.us-east-1.amazonaws.com/",
      fields: { key: "staging/demo/0b6f3c1e-6a52-4b8f-9a51-3d2f1c9e7a40", "Content-Type": "audio/mpeg", Policy: "eyJleHBpcmF0aW9uIjoi...", "X-Amz-Signature": "3f1d..." },
      expiresAt: "2026-11-26T18:33:31.000Z",
    },
  },
  "complete-upload": { parameters: { uploadId: "0b6f3c1e-6a52-4b8f-9a51-3d2f1c9e7a40" }, answer: { blob } },
  "get-audio": { parameters: { url: `blobs/demo/${audioCid}`, exp, sig } },
  health: { answer: { ok: true, sha: null, deployedAt: null, backend: "pglite", records: "present", blobs: "present" } },
  openapi: { answer: { openapi: "3.1.0", info: { title: "Audio post service", version: "1.0.0" }, servers: [{ url: sampleServiceUrl }], paths: {} } },
  reference: { answer: "<!doctype html>\n<html lang=\"en\">…</html>" },
};
