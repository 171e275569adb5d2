/** The ElevenLabs adapters against a local fake speaking the documented protocol. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedAudioTypes, type AcceptedMimeType } from "../../records/accepted-types";
import { rawCid } from "../../blobs/raw-cid";
import { sniffAudioFamily } from "../../audio/sniff-audio";
import { blobKey } from "../../blobs/blob-key";
import type { FsBlobStore } from "../../blobs/blob-store";
import { createFsBlobStore } from "../../blobs/fs-blob-store";
import { resolveFfmpegPath } from "../../rendition/ffmpeg-path";
import { type FakeElevenLabs, sampleSpeech, startFakeElevenLabs } from "../../../test/support/fake-elevenlabs";
import { channelLayout, makeClip } from "../../../test/support/rendition-fixtures";
import { type AudioRef, ProviderError } from "../provider-port";
import { createElevenLabsDenoiser } from "./elevenlabs-denoiser";
import { createElevenLabsTranscriber } from "./elevenlabs-transcriber";

let fake: FakeElevenLabs;
let dir: string;
let store: FsBlobStore;
let isolatedMp3: Buffer;

beforeAll(async () => {
  isolatedMp3 = await makeClip("audio/mpeg", { lead: 0.2, tone: 1, tail: 0.2 });
  fake = await startFakeElevenLabs({ isolated: isolatedMp3 });
  dir = await mkdtemp(join(tmpdir(), "elevenlabs-test-"));
  store = createFsBlobStore(dir);
});
afterAll(async () => {
  await fake?.close();
  await rm(dir, { recursive: true, force: true });
});

const put = async (mimeType: AcceptedMimeType, channels = 1): Promise<AudioRef> => {
  const bytes = await makeClip(mimeType, { lead: 0.2, tone: 0.5, tail: 0.2, channels });
  const cid = rawCid(bytes);
  await store.writeAtomic(blobKey("demo", cid), Readable.from([bytes]));
  return { appId: "demo", cid, mimeType, size: bytes.length, durationMs: 900 };
};
const call = (ms = 5000) => ({ signal: new AbortController().signal, deadline: Date.now() + ms });
const transcriber = (model?: string) => createElevenLabsTranscriber({ baseUrl: fake.url, apiKey: fake.apiKey, blobs: store, ...(model && { model }) });
const denoiser = () => createElevenLabsDenoiser({ baseUrl: fake.url, apiKey: fake.apiKey, blobs: store, ffmpeg: resolveFfmpegPath() });

const providerError = async (promise: Promise<unknown>): Promise<ProviderError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  // The API key never appears in an error.
  expect(JSON.stringify({ message: (error as Error).message, cause: String((error as Error).cause) })).not.toContain(fake.apiKey);
  return error as ProviderError;
};

describe("elevenlabs speech to text", () => {
  it("posts multipart file and model_id (default scribe_v2) with xi-api-key, asking for word timestamps and diarization", async () => {
    const audio = await put("audio/webm");
    await transcriber().transcribe(audio, call());
    const request = fake.seen.at(-1)!;
    expect(request).toMatchObject({
      path: "/v1/speech-to-text",
      apiKey: fake.apiKey,
      fields: { model_id: "scribe_v2", timestamps_granularity: "word", diarize: "true" },
    });
    expect(request.files.file).toEqual({ size: audio.size, mimeType: "audio/webm" });
  });

  it("words become segments with words, speakers and events; spacing is no word, an audio event no word; ISO 639-3 eng is lang en", async () => {
    const transcript = await transcriber().transcribe(await put("audio/webm"), call());
    expect(transcript).toEqual({
      text: "Hello there, how are you? (laughter) I'm fine thanks Good.",
      lang: "en",
      model: "scribe_v2",
      segments: [
        {
          startMs: 100,
          endMs: 1600,
          text: "Hello there, how are you?",
          speaker: "speaker_0",
          words: [
            { text: "Hello", startMs: 100, endMs: 500, confidence: 990 },
            { text: "there,", startMs: 600, endMs: 900, confidence: 951 },
            { text: "how", startMs: 950, endMs: 1100, confidence: 980 },
            { text: "are", startMs: 1150, endMs: 1300, confidence: 980 },
            { text: "you?", startMs: 1350, endMs: 1600, confidence: 905 },
          ],
        },
        {
          startMs: 2300,
          endMs: 3200,
          text: "I'm fine thanks",
          speaker: "speaker_1",
          words: [
            { text: "I'm", startMs: 2300, endMs: 2500, confidence: 819 },
            { text: "fine", startMs: 2550, endMs: 2800, confidence: 970 },
            { text: "thanks", startMs: 2850, endMs: 3200, confidence: 497 },
          ],
          events: [{ text: "(laughter)", startMs: 1700, endMs: 2200 }],
        },
        { startMs: 3400, endMs: 3800, text: "Good.", speaker: "speaker_0", words: [{ text: "Good.", startMs: 3400, endMs: 3800, confidence: 990 }] },
      ],
    });
  });

  it("an answer without speaker ids gives segments without speakers, split at sentence ends only", async () => {
    fake.queue.push({ status: 200, json: sampleSpeech(false) });
    const transcript = await transcriber().transcribe(await put("audio/wav"), call());
    expect(transcript.segments!.map((s) => [s.text, s.startMs, s.endMs, s.speaker])).toEqual([
      ["Hello there, how are you?", 100, 1600, undefined],
      ["I'm fine thanks Good.", 2300, 3800, undefined],
    ]);
  });

  it("sends the pinned model (ELEVENLABS_STT_MODEL or a pin)", async () => {
    const transcript = await transcriber("scribe_v1").transcribe(await put("audio/wav"), call());
    expect(fake.seen.at(-1)!.fields.model_id).toBe("scribe_v1");
    expect(transcript.model).toBe("scribe_v1");
  });

  it("a 4xx a retry cannot fix fails; a wrong key fails without showing the key", async () => {
    fake.queue.push({ status: 422, json: { detail: "bad" } });
    expect((await providerError(transcriber().transcribe(await put("audio/wav"), call()))).disposition).toBe("fail");
    const wrongKey = createElevenLabsTranscriber({ baseUrl: fake.url, apiKey: "sk-wrong-key-0000", blobs: store });
    const error = await providerError(wrongKey.transcribe(await put("audio/wav"), call()));
    expect(error.disposition).toBe("fail");
    expect(error.message).not.toContain("sk-wrong-key-0000");
  });

  it("a 429 is retried, and the retry succeeds", async () => {
    const audio = await put("audio/ogg");
    fake.queue.push({ status: 429, json: { detail: { status: "too_many_concurrent_requests" } } });
    expect((await providerError(transcriber().transcribe(audio, call()))).disposition).toBe("retry");
    expect((await transcriber().transcribe(audio, call())).text).toBe(sampleSpeech(true).text);
  });

  it("a timeout and a 5xx are retried", async () => {
    const audio = await put("audio/wav");
    fake.queue.push({ status: 200, json: {}, delayMs: 1000 });
    expect(await providerError(transcriber().transcribe(audio, call(200)))).toMatchObject({ disposition: "retry", reason: "timeout" });
    fake.queue.push({ status: 503, json: { detail: "overloaded" } });
    expect((await providerError(transcriber().transcribe(audio, call()))).disposition).toBe("retry");
  });

  it("an answer cut short after its 200 (a connection reset) is retried, not taken for a malformed answer", async () => {
    const audio = await put("audio/wav");
    const cut = (async () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"text":"hel'));
            controller.error(new TypeError("terminated: other side closed"));
          },
        }),
        { status: 200, headers: { "content-type": "application/json" } },
      )) as typeof fetch;
    const reset = createElevenLabsTranscriber({ baseUrl: fake.url, apiKey: fake.apiKey, blobs: store, fetch: cut });
    expect((await providerError(reset.transcribe(audio, call()))).disposition).toBe("retry");
  });

  it("a malformed answer fails, and a redirect is not followed", async () => {
    const audio = await put("audio/wav");
    for (const json of ["not json", { words: [] }, { text: 3 }]) {
      fake.queue.push({ status: 200, json });
      expect((await providerError(transcriber().transcribe(audio, call()))).disposition).toBe("fail");
    }
    const before = fake.seen.length;
    fake.queue.push({ status: 302, headers: { Location: `${fake.url}/v1/speech-to-text` } });
    expect((await providerError(transcriber().transcribe(audio, call()))).disposition).toBe("fail");
    expect(fake.seen.length).toBe(before + 1);
  });

  it("an answer with a timed token that is negative, huge, non-finite or ends before it starts, or a word starting before the one before it, is malformed and fails", async () => {
    const audio = await put("audio/wav");
    const w = (text: string, start: number, end: number, type = "word") => ({ text, start, end, type, speaker_id: "speaker_0", logprob: -0.1 });
    const answers = [
      [w("a", 5, 6), w(" ", 6, 6, "spacing"), w("b", 1, 2)],
      [w("a", 5, 3)],
      [w("a", -1, 0.5)],
      [w("a", 1e306, 1e307)],
      [w("a", 1e20, 1e21)],
      [w("a", 0, 1), w("(laughter)", 2, 1, "audio_event")],
    ];
    for (const words of answers) {
      fake.queue.push({ status: 200, json: { language_code: "eng", text: "a b", words } });
      const error = await providerError(transcriber().transcribe(audio, call()));
      expect(error, JSON.stringify(words)).toMatchObject({ disposition: "fail", message: expect.stringMatching(/^elevenlabs speech-to-text: malformed answer/) });
    }
  });
});

describe("elevenlabs audio isolation", () => {
  it.each<AcceptedMimeType>(["audio/wav", "audio/m4a", "audio/mpeg"])(
    "posts multipart audio and stores the isolated audio re-encoded in the upload's family (%s)",
    async (mimeType) => {
      const audio = await put(mimeType);
      const variant = await denoiser().denoise(audio, call());
      expect(fake.seen.at(-1)).toMatchObject({ path: "/v1/audio-isolation", apiKey: fake.apiKey });
      expect(fake.seen.at(-1)!.files.audio).toEqual({ size: audio.size, mimeType });
      expect(variant).toMatchObject({ appId: "demo", mimeType });
      const found = await store.read(blobKey("demo", variant.cid));
      const chunks: Buffer[] = [];
      for await (const c of found!.stream) chunks.push(c as Buffer);
      const bytes = Buffer.concat(chunks);
      expect(rawCid(bytes)).toBe(variant.cid);
      expect(variant.size).toBe(bytes.length);
      expect(await sniffAudioFamily(bytes)).toBe(acceptedAudioTypes[mimeType]);
      expect(Math.abs(variant.durationMs! - 1400)).toBeLessThanOrEqual(100);
      if (mimeType === "audio/mpeg") expect(bytes.equals(isolatedMp3)).toBe(true);
    },
  );

  it.each<AcceptedMimeType>(["audio/wav", "audio/mpeg"])(
    "keeps a stereo upload stereo (%s) when the service answers mono: the loudness target follows the channel count",
    async (mimeType) => {
      expect(await channelLayout(isolatedMp3)).toBe("mono");
      const variant = await denoiser().denoise(await put(mimeType, 2), call());
      const found = await store.read(blobKey("demo", variant.cid));
      const chunks: Buffer[] = [];
      for await (const c of found!.stream) chunks.push(c as Buffer);
      expect(await channelLayout(Buffer.concat(chunks))).toBe("stereo");
    },
  );

  it("a 4xx fails; a 429 then a retry succeeds; a timeout is retried", async () => {
    const audio = await put("audio/wav");
    fake.queue.push({ status: 400, json: { detail: "bad audio" } });
    expect((await providerError(denoiser().denoise(audio, call()))).disposition).toBe("fail");
    fake.queue.push({ status: 429, json: { detail: "slow down" } });
    expect((await providerError(denoiser().denoise(audio, call()))).disposition).toBe("retry");
    expect((await denoiser().denoise(audio, call())).mimeType).toBe("audio/wav");
    fake.queue.push({ status: 200, bytes: isolatedMp3, delayMs: 1000 });
    expect(await providerError(denoiser().denoise(audio, call(200)))).toMatchObject({ disposition: "retry", reason: "timeout" });
  });

  it("a malformed answer (bytes that are not audio, or none) fails", async () => {
    const audio = await put("audio/wav");
    fake.queue.push({ status: 200, bytes: Buffer.from("<html>not audio</html>") });
    expect(await providerError(denoiser().denoise(audio, call()))).toMatchObject({ disposition: "fail", message: expect.stringMatching(/not audio ffmpeg can decode/) });
    fake.queue.push({ status: 200, bytes: Buffer.alloc(0) });
    expect((await providerError(denoiser().denoise(audio, call()))).disposition).toBe("fail");
  });

  it("says a re-encode that failed failed, not that the answer is not audio", async () => {
    // An ffmpeg whose Opus encoder refuses (as libopus refused 3- and 4-channel layouts): every other run is the real one.
    const failing = join(dir, "ffmpeg-no-opus");
    await writeFile(failing, `#!/bin/sh\ncase "$*" in *libopus*) echo "encoder refused" >&2; exit 1;; esac\nexec "${resolveFfmpegPath()}" "$@"\n`, { mode: 0o755 });
    const refusing = createElevenLabsDenoiser({ baseUrl: fake.url, apiKey: fake.apiKey, blobs: store, ffmpeg: failing });
    const error = await providerError(refusing.denoise(await put("audio/ogg"), call()));
    expect(error).toMatchObject({ disposition: "fail", message: expect.stringMatching(/^elevenlabs audio-isolation: re-encoding the answer as audio\/ogg failed/) });
  });
});
