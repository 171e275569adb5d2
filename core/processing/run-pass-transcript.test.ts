/**
 * A provider's transcript that is no valid record settles the transcribe stage failed (provider_error) at once,
 * through the whole service: nothing is stored, the stage does not wait for the sweep, and the provider is not billed
 * again by retries. Nor is it called for a tenant whose transcript could have no subject.
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeElevenLabs, sampleSpeech, startFakeElevenLabs } from "../../test/support/fake-elevenlabs";
import { backends, migratedDatabase } from "../../test/support/databases";
import { testProviders } from "../../test/support/enrichment-harness";
import { audioPost, seedAudio } from "../../test/support/seeded-audio";
import { startTestService, type TestService } from "../../test/support/test-service";
import type { ProviderEntry } from "../providers/provider-entry";
import { runStageMessage } from "../runtime/jobs/stage-handler";
import type { Transcript } from "../providers/provider-port";

const fastRetries = { maxAttempts: 3, delayMs: () => 10 };

const transcribe = async (svc: TestService) => {
  const blob = await seedAudio(svc.deps, "alpha");
  const created = await svc.post("/api/v1/posts", { actor: "author", json: audioPost(blob, { transcribe: true }) });
  expect(created.status).toBe(201);
  const view = (await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor: "author" })).json.data;
  return { processing: view.processing.transcribe, transcript: view.embed.transcript };
};

describe("an ElevenLabs answer with malformed word times, through the service", () => {
  let svc: TestService;
  let fake: FakeElevenLabs;
  beforeAll(async () => {
    fake = await startFakeElevenLabs({ isolated: Buffer.alloc(10) });
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backends[0]!),
      env: { SVC_PROCESSING_INLINE: "true", ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_BASE_URL: fake.url },
      enrichment: { retry: fastRetries },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  it("a word out of order, ending before it starts, negative or non-finite settles transcribe failed (provider_error) at once, storing no transcript", async () => {
    const w = (text: string, start: number, end: number) => ({ text, start, end, type: "word", speaker_id: "speaker_0", logprob: -0.1 });
    for (const words of [[w("a", 5, 6), w("b", 1, 2)], [w("a", 5, 3)], [w("a", -1, 0.5)], [w("a", 1e306, 1e307)]]) {
      const before = fake.seen.length;
      fake.queue.push({ status: 200, json: { language_code: "eng", text: "a b", words } });
      const { processing, transcript } = await transcribe(svc);
      expect(processing, JSON.stringify(words)).toMatchObject({ status: "failed", reason: "provider_error" });
      expect(transcript).toBeUndefined();
      await svc.deps.enrichment.drain();
      expect(fake.seen.length - before).toBe(1);
    }
    // The same service stores a well-formed answer.
    fake.queue.push({ status: 200, json: sampleSpeech(true) });
    expect((await transcribe(svc)).processing.status).toBe("ready");
  });
});

describe("a transcript its lexicon refuses, through the service", () => {
  let svc: TestService;
  let answer: Transcript;
  let calls = 0;
  const registry: ProviderEntry[] = [
    {
      name: "test",
      stages: ["transcribe"],
      explicitOnly: false,
      available: () => true,
      adapters: { transcribe: () => ({ name: "test", transcribe: async () => (calls++, answer) }) },
    },
  ];
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backends[0]!),
      env: { SVC_PROCESSING_INLINE: "true" },
      enrichment: { providers: registry, retry: fastRetries },
    });
  });
  afterAll(() => svc?.close());

  it("is validated before it is stored: a record the lexicon refuses, or one that cannot be encoded, settles transcribe failed (provider_error) at once", async () => {
    const segment = (startMs: number, endMs: number) => ({ startMs, endMs, text: "a", words: [{ text: "a", startMs, endMs }] });
    for (const segments of [[segment(-5, 10)], [{ ...segment(0, 10), speaker: "s".repeat(65) }], [segment(1e309, 1e309)]]) {
      answer = { text: "a", segments };
      const before = calls;
      const { processing, transcript } = await transcribe(svc);
      expect(processing, JSON.stringify(segments)).toMatchObject({ status: "failed", reason: "provider_error" });
      expect(transcript).toBeUndefined();
      await svc.deps.enrichment.drain();
      expect(calls - before).toBe(1);
    }
    answer = { text: "a", segments: [segment(0, 10)] };
    expect((await transcribe(svc)).processing.status).toBe("ready");
  });
});

describe("a tenant with no DID any more, through the service and its queue", () => {
  it("settles transcribe failed (provider_error) on the first receive, without calling the transcriber: no retry gives the record a subject", async () => {
    const bodies: string[] = [];
    const capture = { send: async (command: { input: { MessageBody: string } }) => void bodies.push(command.input.MessageBody) } as unknown as SQSClient;
    const providers = testProviders();
    const svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backends[0]!),
      env: { PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/processing" },
      enrichment: { sqs: capture, providers: providers.registry },
    });
    try {
      const blob = await seedAudio(svc.deps, "alpha");
      expect((await svc.post("/api/v1/posts", { actor: "author", json: audioPost(blob, { transcribe: true }) })).status).toBe(201);
      // The tenant is taken out of SVC_APP_DIDS (offboarded) before the stage function runs the job.
      const tenants = svc.deps.config.tenants as Map<string, { appId: string; token?: string; did?: string }>;
      tenants.set("alpha", { appId: "alpha", token: tenants.get("alpha")!.token });
      expect(await runStageMessage(svc.deps, bodies[0]!, 1)).toBe("done");
      expect(providers.count("transcribe")).toBe(0);
      expect(await svc.deps.sql.query(`SELECT stage, status, reason FROM post_stages`, [])).toEqual([{ stage: "transcribe", status: "failed", reason: "provider_error" }]);
    } finally {
      await svc.close();
    }
  });
});
