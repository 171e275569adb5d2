/** The Amazon Transcribe adapter against a local fake speaking Transcribe's JSON protocol. */
import { TranscribeClient } from "@aws-sdk/client-transcribe";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rawCid } from "../../blobs/raw-cid";
import { type FakeTranscribe, sampleTranscribeOutput, startFakeTranscribe } from "../../../test/support/fake-transcribe";
import { type AudioRef, ProviderError } from "../provider-port";
import { createTranscribeTranscriber, transcriptionJobName } from "./transcribe-transcriber";

let fake: FakeTranscribe;
let client: TranscribeClient;

beforeAll(async () => {
  fake = await startFakeTranscribe();
  client = new TranscribeClient({ region: "us-east-1", endpoint: fake.url, credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" }, maxAttempts: 1 });
});
afterAll(async () => {
  client?.destroy();
  await fake?.close();
});
beforeEach(() => {
  fake.inProgressGets = 1;
});

let n = 0;
const audio = (): AudioRef => ({ appId: "demo", cid: rawCid(Buffer.from(`clip ${n++}`)), mimeType: "audio/m4a", size: 100, durationMs: 2500 });
const call = (ms = 5000) => ({ signal: new AbortController().signal, deadline: Date.now() + ms });
const transcriber = (model?: string) => createTranscribeTranscriber({ client, bucket: "svc-blobs", pollMs: 20, ...(model && { model }) });

const providerError = async (promise: Promise<unknown>): Promise<ProviderError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
};

describe("aws-transcribe", () => {
  it("starts a job on the blob's s3:// URI with speaker labels and language identification, and polls it to COMPLETED", async () => {
    const clip = audio();
    await transcriber().transcribe(clip, call());
    const job = fake.jobs.get(transcriptionJobName(clip, undefined))!;
    expect(job.request).toMatchObject({
      Media: { MediaFileUri: `s3://svc-blobs/blobs/demo/${clip.cid}` },
      MediaFormat: "m4a",
      IdentifyLanguage: true,
      Settings: { ShowSpeakerLabels: true, MaxSpeakerLabels: 10 },
    });
    expect(job.request).not.toHaveProperty("LanguageCode");
    expect(job.gets).toBe(2);
  });

  it("pronunciations become words (punctuation joins the word before it), speaker labels speakers, the identified language lang", async () => {
    const transcript = await transcriber().transcribe(audio(), call());
    const word = (text: string, startMs: number, endMs: number, confidence = 998) => ({ text, startMs, endMs, confidence });
    expect(transcript).toEqual({
      text: "Hello there, how are you? I'm fine thanks Good.",
      lang: "en-US",
      segments: [
        {
          startMs: 100,
          endMs: 1600,
          text: "Hello there, how are you?",
          speaker: "speaker_0",
          words: [word("Hello", 100, 500), word("there,", 600, 900), word("how", 950, 1100), word("are", 1150, 1300), word("you?", 1350, 1600)],
        },
        // "thanks" has no speaker_label of its own: speaker_labels.segments say spk_1 spoke then.
        { startMs: 2300, endMs: 3200, text: "I'm fine thanks", speaker: "speaker_1", words: [word("I'm", 2300, 2500), word("fine", 2550, 2800), word("thanks", 2850, 3200, 512)] },
        { startMs: 3400, endMs: 3800, text: "Good.", speaker: "speaker_0", words: [word("Good.", 3400, 3800)] },
      ],
    });
  });

  it("an output without speaker labels gives segments without speakers, split at sentence ends only", async () => {
    fake.forcedFiles.push({ status: 200, body: sampleTranscribeOutput({ name: "x", request: {}, gets: 0 }) });
    const transcript = await transcriber().transcribe(audio(), call());
    expect(transcript.segments!.map((s) => [s.text, s.startMs, s.endMs, s.speaker])).toEqual([
      ["Hello there, how are you?", 100, 1600, undefined],
      ["I'm fine thanks Good.", 2300, 3800, undefined],
    ]);
  });

  it("SVC_PLATFORM_STT_MODEL as a language code sets LanguageCode instead of identification; lang is the job's language", async () => {
    const clip = audio();
    const transcript = await transcriber("en-GB").transcribe(clip, call());
    const request = fake.jobs.get(transcriptionJobName(clip, "en-GB"))!.request;
    expect(request).toMatchObject({ LanguageCode: "en-GB", Settings: { ShowSpeakerLabels: true } });
    expect(request).not.toHaveProperty("IdentifyLanguage");
    expect(transcript.model).toBe("en-GB");
    expect(transcript.lang).toBe("en-GB");
    expect((await providerError(transcriber("whisper-large").transcribe(audio(), call()))).disposition).toBe("fail");
  });

  it("a job still running at the deadline is retried through the queue with reason timeout (the stage's on its last attempt), and the next attempt finds the same job", async () => {
    const clip = audio();
    fake.inProgressGets = 1000;
    const error = await providerError(transcriber().transcribe(clip, call(150)));
    expect(error).toMatchObject({ disposition: "retry", reason: "timeout" });
    expect(fake.jobs.size).toBeGreaterThan(0);
    const before = fake.jobs.size;
    fake.inProgressGets = 0;
    expect((await transcriber().transcribe(clip, call())).text).toBe("Hello there, how are you? I'm fine thanks Good.");
    expect(fake.jobs.size).toBe(before);
  });

  it("a 4xx fails; throttling (429) is retried and the retry succeeds", async () => {
    fake.forced.push({ status: 400, type: "BadRequestException" });
    expect((await providerError(transcriber().transcribe(audio(), call()))).disposition).toBe("fail");
    const clip = audio();
    fake.forced.push({ status: 429, type: "ThrottlingException" });
    expect((await providerError(transcriber().transcribe(clip, call()))).disposition).toBe("retry");
    expect((await transcriber().transcribe(clip, call())).lang).toBe("en-US");
  });

  it("a timeout and a 5xx are retried; a FAILED job fails", async () => {
    fake.forced.push({ status: 200, body: {}, delayMs: 1000 });
    expect(await providerError(transcriber().transcribe(audio(), call(200)))).toMatchObject({ disposition: "retry", reason: "timeout" });
    fake.forced.push({ status: 500, type: "InternalFailureException" });
    expect((await providerError(transcriber().transcribe(audio(), call()))).disposition).toBe("retry");
    fake.forced.push({ status: 200, body: {} }, { status: 200, body: { TranscriptionJob: { TranscriptionJobName: "x", TranscriptionJobStatus: "FAILED", FailureReason: "bad media" } } });
    expect((await providerError(transcriber().transcribe(audio(), call()))).disposition).toBe("fail");
  });

  it("a FAILED job an earlier request left under the blob's job name is deleted and started again, so a rerun can succeed", async () => {
    const clip = audio();
    fake.inProgressGets = 0;
    const name = transcriptionJobName(clip, undefined);
    fake.jobs.set(name, { name, request: { Media: { MediaFileUri: "s3://svc-blobs/x" } }, gets: 0, fails: true });
    fake.targets.length = 0;
    expect((await transcriber().transcribe(clip, call())).text).toBe("Hello there, how are you? I'm fine thanks Good.");
    expect(fake.targets).toEqual([
      "Transcribe.StartTranscriptionJob",
      "Transcribe.GetTranscriptionJob",
      "Transcribe.DeleteTranscriptionJob",
      "Transcribe.StartTranscriptionJob",
      "Transcribe.GetTranscriptionJob",
    ]);
  });

  it("a job this call started that ends FAILED fails the stage, with no second job", async () => {
    fake.failNewJobs = true;
    fake.targets.length = 0;
    try {
      const error = await providerError(transcriber().transcribe(audio(), call()));
      expect(error).toMatchObject({ disposition: "fail", message: expect.stringContaining("FAILED") });
      expect(fake.targets.filter((t) => t.endsWith("StartTranscriptionJob"))).toHaveLength(1);
      expect(fake.targets.filter((t) => t.endsWith("DeleteTranscriptionJob"))).toEqual([]);
    } finally {
      fake.failNewJobs = false;
    }
  });

  it("a malformed transcript file fails", async () => {
    for (const body of [{ results: { transcripts: [] } }, { results: { transcripts: [{ transcript: "x" }], items: [{ type: "pronunciation", start_time: 1, end_time: 2, alternatives: [{ content: "x" }] }] } }]) {
      fake.forcedFiles.push({ status: 200, body });
      expect((await providerError(transcriber().transcribe(audio(), call()))).disposition).toBe("fail");
    }
  });

  it("a transcript file with a word that ends before it starts, is out of order or past the safe integers of milliseconds is malformed and fails", async () => {
    const p = (content: string, start_time: string, end_time: string) => ({ type: "pronunciation", start_time, end_time, alternatives: [{ content, confidence: "0.9" }] });
    for (const items of [[p("a", "5.0", "3.0")], [p("a", "5.0", "6.0"), p("b", "1.0", "2.0")], [p("a", "99999999999999999999999.0", "99999999999999999999999.5")]]) {
      fake.forcedFiles.push({ status: 200, body: { results: { transcripts: [{ transcript: "a b" }], items } } });
      const error = await providerError(transcriber().transcribe(audio(), call()));
      expect(error, JSON.stringify(items)).toMatchObject({ disposition: "fail", message: expect.stringMatching(/^aws-transcribe transcript: malformed answer/) });
    }
  });
});
