/**
 * What the pass does with the provider rule (docs/decisions.md#providers), through the whole service: the model the
 * rule chooses is the one the provider is asked for and the transcript record names, and a stage whose provider
 * is gone by the time its job runs settles failed with the reason the pass finds.
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeElevenLabs, startFakeElevenLabs } from "../../test/support/fake-elevenlabs";
import { backends, migratedDatabase } from "../../test/support/databases";
import { audioPost, seedAudio } from "../../test/support/seeded-audio";
import { startTestService, type TestService } from "../../test/support/test-service";
import type { ProcessingConfig } from "../config/processing-config";
import { runStageMessage } from "../runtime/jobs/stage-handler";

describe("the transcription model the pass asks for", () => {
  let svc: TestService;
  let fake: FakeElevenLabs;
  beforeAll(async () => {
    fake = await startFakeElevenLabs({ isolated: Buffer.alloc(10) });
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backends[0]!),
      env: {
        SVC_PROCESSING_INLINE: "true",
        ELEVENLABS_API_KEY: fake.apiKey,
        ELEVENLABS_BASE_URL: fake.url,
        SVC_TRANSCRIBER: "elevenlabs:scribe_deployment",
        SVC_APP_STT_MODELS: "alpha:scribe_tenant",
        ELEVENLABS_STT_MODEL: "scribe_variable",
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  const transcribe = async (appId: "alpha" | "beta") => {
    const blob = await seedAudio(svc.deps, appId);
    const token = svc.tenants[appId].token;
    const created = await svc.post("/api/v1/posts", { token, actor: "author", json: audioPost(blob, { transcribe: true }) });
    expect(created.status).toBe(201);
    const postId = created.json.data.postId as string;
    const view = (await svc.get(`/api/v1/posts/${postId}`, { token, actor: "author" })).json.data;
    expect(view.processing.transcribe.status).toBe("ready");
    const [row] = await svc.deps.sql.query<{ model: string | null }>(`SELECT record->>'model' AS model FROM transcripts WHERE app_id = $1 AND rkey = $2`, [appId, postId]);
    return { asked: fake.seen.at(-1)!.fields.model_id, stored: row?.model };
  };

  it("is the tenant's model pin (SVC_APP_STT_MODELS) over the deployment value's model and the provider's variable, sent to the provider and named in the transcript record", async () => {
    expect(await transcribe("alpha")).toEqual({ asked: "scribe_tenant", stored: "scribe_tenant" });
  });

  it("is the deployment value's model (provider:model) for a tenant without a pin, over ELEVENLABS_STT_MODEL", async () => {
    expect(await transcribe("beta")).toEqual({ asked: "scribe_deployment", stored: "scribe_deployment" });
  });
});

describe("a deployment changed between the request and the pass", () => {
  it("settles the stage failed with the reason the pass finds: no_provider when none is left, provider_misconfigured when the value names one not configured", async () => {
    const bodies: string[] = [];
    const capture = { send: async (command: { input: { MessageBody: string } }) => void bodies.push(command.input.MessageBody) } as unknown as SQSClient;
    const svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backends[0]!),
      env: { PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/processing", SVC_TRIMMER: "stub", SVC_WAVEFORM: "stub" },
      enrichment: { sqs: capture },
    });
    try {
      const blob = await seedAudio(svc.deps, "alpha");
      expect((await svc.post("/api/v1/posts", { actor: "author", json: audioPost(blob, { trim: true, waveform: true }) })).status).toBe(201);
      expect(await svc.deps.sql.query(`SELECT stage, status FROM post_stages ORDER BY stage`, [])).toEqual([
        { stage: "trim", status: "pending" },
        { stage: "waveform", status: "pending" },
      ]);
      // Redeployed before the job runs: the waveform default removed (no rendition service either), the trimmer
      // pointed at the rendition service, which is not configured.
      const defaults = (svc.deps.config.processing as ProcessingConfig).defaults;
      delete defaults.waveform;
      defaults.trim = { provider: "rendition" };
      expect(await runStageMessage(svc.deps, bodies[0]!, 1)).toBe("done");
      expect(await svc.deps.sql.query(`SELECT stage, status, reason FROM post_stages ORDER BY stage`, [])).toEqual([
        { stage: "trim", status: "failed", reason: "provider_misconfigured" },
        { stage: "waveform", status: "failed", reason: "no_provider" },
      ]);
    } finally {
      await svc.close();
    }
  });
});
