import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { backends, dataApiBackends, migratedDatabase } from "./support/databases";
import type { DriverName } from "./support/test-service";
import { startTestService, type TestService } from "./support/test-service";
import { startWebhookReceiver } from "./support/webhook-receiver";
import { webhookSecret } from "./support/enrichment-harness";
import { verifyWebhook } from "../core/webhooks/verify-webhook";
import { stubTranscriber, stubWaveform } from "../core/providers/stub-providers";
import type { Waveform } from "../core/providers/provider-port";
import { waveformOverview } from "../core/posts/waveform-overview";

const allStages = { denoise: true, trim: true, normalize: true, transcribe: true, waveform: true };
const patch = (svc: TestService, postId: string, actor: string | undefined, json: unknown, headers?: Record<string, string>) =>
  svc.call("PATCH", `/api/v1/posts/${postId}`, { ...(actor !== undefined && { actor }), json, headers });

/** Every driver on every backend (migrated from a template, which starts fast), and Lambda over the Data API. */
const serviceMatrix = [
  ...backends.flatMap((backend) =>
    (["node", "lambda"] as DriverName[]).map((driver) => ({ name: `${driver} on ${backend.name}`, driver, sql: () => migratedDatabase(backend) })),
  ),
  ...dataApiBackends.slice(0, 1).map((backend) => ({ name: `lambda on ${backend.name}`, driver: "lambda" as DriverName, sql: backend.open })),
];

/** PATCH and create-with-processing (docs/decisions.md#processing), on every driver and backend. */
describe.each(serviceMatrix)("processing requests over $name", ({ driver, sql }) => {
  describe("inline dispatch with stub providers", () => {
    let svc: TestService;
    /** The service's clock runs ahead of the wall clock by this much: a test moves it instead of sleeping. */
    let ahead = 0;
    beforeAll(async () => {
      svc = await startTestService({ driver, sql, env: { SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true" }, now: () => new Date(Date.now() + ahead) });
    });
    afterAll(() => svc?.close());

    const audioPostBy = async (actor: string, processing?: Record<string, boolean>, token?: string, appId = "alpha") => {
      const blob = await seedAudio(svc.deps, appId);
      const res = await svc.post("/api/v1/posts", { actor, json: audioPost(blob, processing), token });
      expect(res.status, res.body.toString()).toBe(201);
      return res.json.data.postId as string;
    };

    it("a create with processing runs the stages before it answers (inline) and the view shows each stage ready", async () => {
      const postId = await audioPostBy("pr-1", allStages);
      const view = (await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-1" })).json.data;
      for (const stage of ["denoise", "trim", "normalize", "transcribe", "waveform"]) {
        expect(view.processing[stage]).toEqual({ status: "ready", updatedAt: expect.stringMatching(/^\d{4}-.*Z$/) });
      }
      expect(Object.keys(view.processing)).toEqual(["denoise", "trim", "normalize", "transcribe", "waveform"]);
      // The stub normalizer measures nothing: once normalize is ready the view carries its figures, all null.
      const unmeasured = { integratedLufs: null, truePeakDbtp: null, rangeLu: null };
      expect(view.embed.loudness).toEqual({ ...unmeasured, before: unmeasured });
      expect(view.embed.transcript.text).toMatch(/\S/);
      expect(view.embed.waveform).toMatchObject({ version: 2, channels: 1, bits: 8 });
      expect(view.embed.waveform.data).toHaveLength(view.embed.waveform.length * 2);
    });

    // The Data API refuses a row over 64 KB and a result over 1 MiB (the emulator enforces both, as AWS does).
    it.each([
      ["a waveform past the Data API's 64 KB row limit (10 minutes) is read whole, in parts", 10],
      ["a waveform past the inline budget (an hour) is read whole, in follow-up statements under the 1 MiB cap", 60],
    ] as const)("%s", async (_rule, minutes) => {
      const blob = await seedAudio(svc.deps, "alpha", undefined, minutes * 60_000);
      const created = await svc.post("/api/v1/posts", { actor: "pr-long", json: audioPost(blob, { transcribe: true, waveform: true }) });
      expect(created.status, created.body.toString()).toBe(201);
      const postId = created.json.data.postId as string;
      // As JSON carries it (the stub's -0 peaks read back as 0).
      const expected: Waveform = JSON.parse(JSON.stringify(stubWaveform({ appId: "alpha", cid: blob.ref.$link, mimeType: blob.mimeType, size: blob.size, durationMs: minutes * 60_000 })));
      expect(JSON.stringify(expected).length).toBeGreaterThan(minutes === 10 ? 64 * 1024 : 256 * 1024);

      const view = await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-long" });
      expect(view.status, view.body.toString()).toBe(200);
      expect(view.json.data.embed.waveform, JSON.stringify(view.json.data.processing)).toEqual(expected);
      expect(view.json.data.embed.transcript.text).toMatch(/^Stub transcript/);
      expect(view.json.data.record.text).toBe("with audio");

      const list = await svc.get(`/api/v1/posts?limit=100`, { actor: "pr-long" });
      expect(list.status, list.body.toString()).toBe(200);
      const listed = (list.json.data.items as { uri: string; embed: { waveform: unknown } }[]).find((item) => item.uri.endsWith(postId));
      expect(listed?.embed.waveform).toEqual(waveformOverview(expected));
    });

    it("an hour of transcript words (past the inline budget, no waveform) is read whole through GET and a list, in follow-up statements under the 1 MiB cap", async () => {
      const blob = await seedAudio(svc.deps, "alpha", undefined, 3_600_000);
      const created = await svc.post("/api/v1/posts", { actor: "pr-hour-words", json: audioPost(blob, { transcribe: true }) });
      expect(created.status, created.body.toString()).toBe(201);
      const postId = created.json.data.postId as string;
      const expected = await stubTranscriber().transcribe(
        { appId: "alpha", cid: blob.ref.$link, mimeType: blob.mimeType, size: blob.size, durationMs: 3_600_000 },
        { signal: new AbortController().signal, deadline: Infinity },
      );
      expect(expected.segments!.flatMap((s) => s.words!)).toHaveLength(9000);
      // Several parts of 32 KiB, and more than one follow-up statement of 512 KiB.
      expect(JSON.stringify(expected).length).toBeGreaterThan(512 * 1024);

      const view = await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-hour-words" });
      expect(view.status, view.body.toString()).toBe(200);
      expect(view.json.data.embed.transcript).toEqual({ text: expected.text, lang: "en", segments: expected.segments });

      const list = await svc.get(`/api/v1/posts?limit=100`, { actor: "pr-hour-words" });
      expect(list.status, list.body.toString()).toBe(200);
      const [listed] = list.json.data.items as { uri: string; embed: { transcript: unknown } }[];
      expect(listed!.uri.endsWith(postId)).toBe(true);
      expect(listed!.embed.transcript).toEqual(view.json.data.embed.transcript);
    });

    it("embed.transcript carries the detected language, and segments with speakers and words, each segment spanning its words", async () => {
      const blob = await seedAudio(svc.deps, "alpha", undefined, 20_000);
      const created = await svc.post("/api/v1/posts", { actor: "pr-words", json: audioPost(blob, { transcribe: true }) });
      expect(created.status, created.body.toString()).toBe(201);
      const transcript = (await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor: "pr-words" })).json.data.embed.transcript;
      const expected = await stubTranscriber().transcribe(
        { appId: "alpha", cid: blob.ref.$link, mimeType: blob.mimeType, size: blob.size, durationMs: 20_000 },
        { signal: new AbortController().signal, deadline: Infinity },
      );
      expect(transcript).toEqual({ text: expected.text, lang: "en", segments: expected.segments });
      expect(transcript.segments.map((s: { speaker: string }) => s.speaker).slice(0, 3)).toEqual(["speaker_0", "speaker_1", "speaker_0"]);
      for (const segment of transcript.segments as { startMs: number; endMs: number; words: { startMs: number; endMs: number }[] }[]) {
        expect(segment.startMs).toBe(segment.words[0]!.startMs);
        expect(segment.endMs).toBe(segment.words.at(-1)!.endMs);
      }
    });

    it("a transcript stored before words, speakers and language still reads as it was stored", async () => {
      const postId = await audioPostBy("pr-old");
      const did = (await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-old" })).json.data.uri.split("/")[2];
      const record = {
        $type: "dev.svc.audio.transcript",
        subject: { uri: `at://${did}/dev.svc.audio.post/${postId}`, cid: "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm" },
        text: "Stored long ago.",
        segments: [{ startMs: 0, endMs: 500, text: "Stored long ago." }],
        createdAt: "2026-01-01T00:00:00.000Z",
      };
      await svc.deps.sql.query("INSERT INTO transcripts (app_id, rkey, record, cid, updated_at) VALUES ($1, $2, $3::json, $4, now())", ["alpha", postId, JSON.stringify(record), "bafyreiold"]);
      const view = await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-old" });
      expect(view.status).toBe(200);
      expect(view.json.data.embed.transcript).toEqual({ text: "Stored long ago.", segments: [{ startMs: 0, endMs: 500, text: "Stored long ago." }] });
    });

    it("embed.loudness is absent until normalize is requested and ready", async () => {
      const postId = await audioPostBy("pr-loud", { waveform: true });
      expect((await svc.get(`/api/v1/posts/${postId}`)).json.data.embed.loudness).toBeUndefined();
      const res = await patch(svc, postId, "pr-loud", { processing: { normalize: true } });
      expect(res.status).toBe(202);
      const view = (await svc.get(`/api/v1/posts/${postId}`)).json.data;
      expect(view.processing.normalize.status).toBe("ready");
      expect(view.embed.loudness).toMatchObject({ integratedLufs: null, before: { integratedLufs: null } });
    });

    it("processing is absent from the view when no stage was ever requested", async () => {
      const postId = await audioPostBy("pr-2");
      const view = (await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-2" })).json.data;
      expect(view).not.toHaveProperty("processing");
      expect(view.embed).not.toHaveProperty("transcript");
    });

    it("a create's processing needs an audio embed (400 VALIDATION_ERROR)", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "pr-3", json: { text: "no audio", processing: { transcribe: true } } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("PATCH answers 202 with the post view; only the stages ever requested appear", async () => {
      const postId = await audioPostBy("pr-4");
      const res = await patch(svc, postId, "pr-4", { processing: { transcribe: true } });
      expect(res.status).toBe(202);
      expect(res.json.data.uri).toMatch(new RegExp(`/${postId}$`));
      expect(res.json.data.processing).toEqual({ transcribe: { status: "ready", updatedAt: expect.any(String) } });
      expect(res.json.data.embed.transcript.text).toMatch(/\S/);
    });

    it("processing never changes the record or its cid", async () => {
      const postId = await audioPostBy("pr-5");
      const before = (await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-5" })).json.data;
      const after = (await patch(svc, postId, "pr-5", allStages && { processing: allStages })).json.data;
      expect(after.cid).toBe(before.cid);
      expect(after.record).toEqual(before.record);
    });

    it("requesting a settled stage runs it again (a new updatedAt)", async () => {
      const postId = await audioPostBy("pr-6", { waveform: true });
      const first = (await svc.get(`/api/v1/posts/${postId}`, { actor: "pr-6" })).json.data.processing.waveform;
      ahead += 1_000;
      const again = (await patch(svc, postId, "pr-6", { processing: { waveform: true } })).json.data.processing.waveform;
      expect(again.status).toBe("ready");
      expect(Date.parse(again.updatedAt)).toBeGreaterThan(Date.parse(first.updatedAt));
    });

    it("only the author may PATCH (403 FORBIDDEN)", async () => {
      const postId = await audioPostBy("pr-7");
      const res = await patch(svc, postId, "someone-else", { processing: { trim: true } });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe("FORBIDDEN");
      const view = (await svc.get(`/api/v1/posts/${postId}`)).json.data;
      expect(view).not.toHaveProperty("processing");
    });

    it("an unknown post is 404 NOT_FOUND, and so is another tenant's post", async () => {
      expect((await patch(svc, "3kabcdefghijk", "pr-8", { processing: { trim: true } })).status).toBe(404);
      expect((await patch(svc, "not-a-tid", "pr-8", { processing: { trim: true } })).status).toBe(404);
      const postId = await audioPostBy("pr-8");
      const res = await svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "pr-8", token: svc.tenants.beta.token, json: { processing: { trim: true } } });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("NOT_FOUND");
    });

    it("a post without audio is 400 VALIDATION_ERROR", async () => {
      const created = await svc.post("/api/v1/posts", { actor: "pr-9", json: { text: "words only" } });
      const res = await patch(svc, created.json.data.postId, "pr-9", { processing: { transcribe: true } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it.each([
      ["an unknown field", { processing: { trim: true }, text: "x" }],
      ["no processing", {}],
      ["no stage true", { processing: { trim: false } }],
      ["an empty processing object", { processing: {} }],
      ["an unknown stage", { processing: { trim: true, upscale: true } }],
      ["a stage that is not a boolean", { processing: { trim: "yes" } }],
    ])("a PATCH body is strict: %s is 400 VALIDATION_ERROR", async (name, body) => {
      const actor = `pr-10-${name.replaceAll(" ", "-")}`;
      const postId = await audioPostBy(actor);
      const res = await patch(svc, postId, actor, body);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("a PATCH body over 256 KiB is 413 PAYLOAD_TOO_LARGE", async () => {
      const res = await patch(svc, "3kabcdefghijk", "pr-11", { processing: { trim: true }, pad: "a".repeat(262_144) });
      expect(res.status).toBe(413);
      expect(res.json.error.code).toBe("PAYLOAD_TOO_LARGE");
    });

    it("PATCH needs the acting actor (401 ACTING_ACTOR_REQUIRED) and a service token (401 UNAUTHORIZED)", async () => {
      expect((await patch(svc, "3kabcdefghijk", undefined, { processing: { trim: true } })).json.error.code).toBe("ACTING_ACTOR_REQUIRED");
      const res = await svc.call("PATCH", "/api/v1/posts/3kabcdefghijk", { token: null, actor: "pr-12", json: { processing: { trim: true } } });
      expect(res.status).toBe(401);
    });

    it("PATCH honours Idempotency-Key: the same body replays, another body is 422", async () => {
      const postId = await audioPostBy("pr-13");
      const headers = { "idempotency-key": "patch-1" };
      const first = await patch(svc, postId, "pr-13", { processing: { trim: true } }, headers);
      const replay = await patch(svc, postId, "pr-13", { processing: { trim: true } }, headers);
      expect(replay.status).toBe(202);
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(replay.json).toEqual(first.json);
      const other = await patch(svc, postId, "pr-13", { processing: { waveform: true } }, headers);
      expect(other.status).toBe(422);
      expect(other.json.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    });

    it("a PATCH's Idempotency-Key belongs to its post: the same key on another post is that post's own request", async () => {
      const [first, second] = [await audioPostBy("pr-15"), await audioPostBy("pr-15")];
      const someoneElses = await audioPostBy("pr-16");
      const headers = { "idempotency-key": "patch-per-post" };
      const body = { processing: { trim: true } };
      const a = await patch(svc, first, "pr-15", body, headers);
      expect(a.status).toBe(202);
      const b = await patch(svc, second, "pr-15", body, headers);
      expect(b.status).toBe(202);
      expect(b.headers["idempotent-replayed"]).toBeUndefined();
      expect(b.json.data.uri.split("/").pop()).toBe(second);
      expect(b.json.data.processing.trim).toBeDefined();
      expect((await patch(svc, "3kzzzzzzzzzzz", "pr-15", body, headers)).status).toBe(404);
      const forbidden = await patch(svc, someoneElses, "pr-15", body, headers);
      expect(forbidden.status).toBe(403);
      expect(forbidden.json.error.code).toBe("FORBIDDEN");
    });

    it("PATCH is rate-limited as a write (10 per 15 minutes per actor, then 429)", async () => {
      const actor = "pr-14";
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await patch(svc, "3kabcdefghijk", actor, { processing: { trim: true } })).status);
      expect(statuses.slice(0, 10).every((s) => s === 404)).toBe(true);
      expect(statuses[10]).toBe(429);
    });
  });

  describe("stages that cannot run here settle skipped at request time", () => {
    let svc: TestService;
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      // No dispatcher; transcribe names a provider that is not configured; waveform names the stub.
      svc = await startTestService({
        driver,
        sql,
        env: {
          SVC_TRANSCRIBER: "elevenlabs",
          SVC_WAVEFORM: "stub",
          SVC_APP_WEBHOOK_URLS: `alpha:${receiver.url}`,
          SVC_APP_WEBHOOK_SECRETS: `alpha:${webhookSecret}`,
        },
      });
    });
    afterAll(async () => {
      await svc?.close();
      await receiver?.close();
    });

    it("no provider (normalize without a rendition service too), a misconfigured provider and dispatch off are skipped with their reasons, never pending", async () => {
      const blob = await seedAudio(svc.deps, "alpha");
      const created = await svc.post("/api/v1/posts", { actor: "sk-1", json: audioPost(blob, allStages) });
      expect(created.status).toBe(201);
      const { processing } = (await svc.get(`/api/v1/posts/${created.json.data.postId}`)).json.data;
      expect(processing).toEqual({
        denoise: { status: "skipped", updatedAt: expect.any(String), reason: "no_provider" },
        trim: { status: "skipped", updatedAt: expect.any(String), reason: "no_provider" },
        normalize: { status: "skipped", updatedAt: expect.any(String), reason: "no_provider" },
        transcribe: { status: "skipped", updatedAt: expect.any(String), reason: "provider_misconfigured" },
        waveform: { status: "skipped", updatedAt: expect.any(String), reason: "dispatch_off" },
      });
      // A skipped settle at request time fires its webhook too, signed.
      await svc.deps.enrichment.drain();
      const hooks = receiver.received.filter((h) => h.json.postId === created.json.data.postId);
      expect(hooks.map((h) => `${h.json.stage}:${h.json.status}`).sort()).toEqual(["denoise:skipped", "normalize:skipped", "transcribe:skipped", "trim:skipped", "waveform:skipped"]);
      for (const hook of hooks) expect(verifyWebhook(hook.body, hook.headers, webhookSecret).payload.originAppId).toBe("alpha");
      // Each delivery's outcome is recorded (on the Data API too, where a uuid needs its cast), so no sweep sends it again.
      const outcomes = await svc.deps.sql.query<{ outcome: string | null }>(
        "SELECT outcome FROM webhook_events WHERE app_id = 'alpha' AND rkey = $1",
        [created.json.data.postId],
      );
      expect(outcomes.map((row) => row.outcome)).toEqual(Array(5).fill("delivered"));
    });

    it("a PATCH of a skipped stage settles it skipped again: a later updatedAt and a new webhook, while the stage it does not name keeps its own", async () => {
      const blob = await seedAudio(svc.deps, "alpha");
      const created = await svc.post("/api/v1/posts", { actor: "sk-2", json: audioPost(blob, { transcribe: true, waveform: true }) });
      const postId = created.json.data.postId as string;
      const before = (await svc.get(`/api/v1/posts/${postId}`)).json.data.processing;
      const patched = await svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "sk-2", json: { processing: { waveform: true } } });
      expect(patched.status).toBe(202);
      const after = patched.json.data.processing;
      expect(after.waveform).toMatchObject({ status: "skipped", reason: "dispatch_off" });
      expect(Date.parse(after.waveform.updatedAt)).toBeGreaterThan(Date.parse(before.waveform.updatedAt));
      expect(after.transcribe).toEqual(before.transcribe);
      await svc.deps.enrichment.drain();
      const hooks = receiver.received.filter((h) => h.json.postId === postId);
      expect(hooks.map((h) => `${h.json.stage}:${h.json.status}:${h.json.occurredAt}`).sort()).toEqual(
        [
          `transcribe:skipped:${before.transcribe.updatedAt}`,
          `waveform:skipped:${before.waveform.updatedAt}`,
          `waveform:skipped:${after.waveform.updatedAt}`,
        ].sort(),
      );
      expect(new Set(hooks.map((h) => h.headers["x-svc-event-id"])).size).toBe(3);
    });
  });
});
