import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../core/config/parse-config";
import { parseProcessingConfig } from "../core/config/processing-config";
import { dispatchMode } from "../core/processing/dispatcher";
import { readVariables } from "../core/config/read-variables";
import { createCloudTasksDispatcher } from "../core/dispatch/cloud-tasks-dispatcher";
import { acquireLease, releaseLease } from "../core/processing/lease";
import { ProviderError } from "../core/providers/provider-port";
import { startCloudTasksFake } from "./support/cloud-tasks-fake";
import { requiredEnv } from "./support/config-env";
import { backends, migratedDatabase } from "./support/databases";
import { testProviders } from "./support/enrichment-harness";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService, type TestService } from "./support/test-service";

const systemToken = "test-system-token-0123456789abcdef0123";

/** The Node host dispatching to the Cloud Tasks fake, whose tasks call back its own worker route. */
const startTasksService = (
  fake: Awaited<ReturnType<typeof startCloudTasksFake>>,
  options: { backend?: (typeof backends)[number]; env?: Record<string, string>; providers?: ReturnType<typeof testProviders>["registry"] } = {},
) =>
  startTestService({
    driver: "node",
    sql: () => migratedDatabase(options.backend ?? backends[0]!),
    env: {
      SVC_TASKS_PROJECT: "proj-1",
      SVC_TASKS_LOCATION: "europe-west1",
      SVC_TASKS_QUEUE: "processing",
      SVC_TASKS_ACCESS_TOKEN: "ya29.test-access-token",
      CLOUD_TASKS_BASE_URL: fake.url,
      ...options.env,
    },
    configure: (env, baseUrl) => void (env.SVC_TASKS_WORKER_URL = `${baseUrl}/api/v1/system/process-audio`),
    ...(options.providers && { enrichment: { providers: options.providers } }),
  });

/** Google Cloud Tasks dispatch against a local fake of its REST API, which then calls the worker URL like Cloud Tasks. */
describe.each(backends)("Cloud Tasks dispatch on $name", (backend) => {
  let fake: Awaited<ReturnType<typeof startCloudTasksFake>>;
  let svc: TestService;
  beforeAll(async () => {
    fake = await startCloudTasksFake({ accessToken: "ya29.test-access-token" });
    svc = await startTasksService(fake, { backend, env: { SVC_PROCESSING_STUB: "true" } });
  });
  afterAll(async () => {
    await fake?.close();
    await svc?.close();
  });

  const stagesOf = async (postId: string) =>
    Object.fromEntries((await svc.deps.sql.query(`SELECT stage, status FROM post_stages WHERE rkey = $1`, [postId])).map((r) => [r.stage, r.status]));

  it("a create makes an HTTP task carrying the system token and the job; Cloud Tasks calls the worker URL and the stages settle", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "ct-1", json: audioPost(blob, { transcribe: true, waveform: true }) });
    expect(created.status).toBe(201);
    const postId = created.json.data.postId;
    await fake.settled();
    const task = fake.tasks.at(-1)!;
    expect(task.path).toBe("/v2/projects/proj-1/locations/europe-west1/queues/processing/tasks");
    expect(task.authorization).toBe("Bearer ya29.test-access-token");
    expect(task.httpRequest).toMatchObject({
      httpMethod: "POST",
      url: `${svc.baseUrl}/api/v1/system/process-audio`,
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${systemToken}` },
    });
    expect(JSON.parse(Buffer.from(task.httpRequest.body, "base64").toString())).toEqual({ appId: "alpha", postId });
    expect(task.attempts).toEqual([200]);
    expect(await stagesOf(postId)).toEqual({ transcribe: "ready", waveform: "ready" });
  });

  it("a worker call that meets another pass's live lease is a 503, retried later and never dropped: once the lease is let go, a retry runs the stage", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "ct-2", json: audioPost(blob) });
    const postId = created.json.data.postId;
    const lease = await acquireLease(svc.deps.sql, "alpha", postId, new Date(), 60_000);
    await svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "ct-2", json: { processing: { waveform: true } } });
    await expect.poll(() => fake.tasks.at(-1)?.attempts.length ?? 0, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(fake.tasks.at(-1)!.attempts[0]).toBe(503);
    await releaseLease(svc.deps.sql, "alpha", postId, (lease as { token: string }).token, new Date());
    await fake.settled();
    expect(fake.tasks.at(-1)!.attempts.at(-1)).toBe(200);
    expect(await stagesOf(postId)).toEqual({ waveform: "ready" });
  });

  describe("POST /api/v1/system/process-audio", () => {
    const processAudio = (json: unknown, token: string | null = systemToken) =>
      svc.post("/api/v1/system/process-audio", { token: null, json, headers: token ? { authorization: `Bearer ${token}` } : {} });

    it("answers 200 { ran: false } when there is nothing to do", async () => {
      const res = await processAudio({ appId: "alpha", postId: "3kabcdefghijk" });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ success: true, data: { ran: false } });
    });

    it("a wrong or missing system token is 401", async () => {
      expect((await processAudio({ appId: "alpha", postId: "3kabcdefghijk" }, "x".repeat(40))).status).toBe(401);
      expect((await processAudio({ appId: "alpha", postId: "3kabcdefghijk" }, null)).status).toBe(401);
    });

    it.each([[{ appId: "alpha" }], [{ appId: "alpha", postId: "3kabcdefghijk", extra: 1 }], [{ appId: "al pha", postId: "3kabcdefghijk" }], ["nope"]])(
      "a bad body is 400: %j",
      async (body) => {
        const res = await processAudio(body);
        expect(res.status).toBe(400);
        expect(res.json.error.code).toBe("VALIDATION_ERROR");
      },
    );

    it("is absent from the public OpenAPI description", async () => {
      const doc = (await svc.get("/openapi.json", { token: null })).body.toString();
      expect(doc).not.toContain("/api/v1/system/process-audio");
      expect(doc).toContain("/api/v1/posts/{postId}");
    });
  });
});

describe("a pass longer than the request deadline, through Cloud Tasks", () => {
  it("is answered when it ends, not 503 at SVC_REQUEST_DEADLINE_MS, and its task waits for a whole pass (dispatchDeadline)", async () => {
    const fake = await startCloudTasksFake({ accessToken: "ya29.test-access-token", retryDelayMs: 10 });
    // The waveform takes 2.5 s from when it is called: a second past the request deadline, which every other request
    // (the create) meets even on a loaded machine.
    const slow = testProviders({ gate: { get waveform() { return new Promise<void>((resolve) => setTimeout(resolve, 2_500)); } } });
    const svc = await startTasksService(fake, { env: { SVC_REQUEST_DEADLINE_MS: "1500" }, providers: slow.registry });
    try {
      const blob = await seedAudio(svc.deps, "alpha");
      const created = await svc.post("/api/v1/posts", { actor: "ct-slow", json: audioPost(blob, { waveform: true }) });
      await fake.settled();
      const task = fake.tasks.at(-1)!;
      expect(task.attempts).toEqual([200]);
      expect(task.dispatchDeadline).toBe("930s");
      const [stage] = await svc.deps.sql.query(`SELECT status FROM post_stages WHERE rkey = $1`, [created.json.data.postId]);
      expect(stage).toEqual({ status: "ready" });
    } finally {
      await svc.close();
      await fake.close();
    }
  });
});

describe("the system route under the one retry policy", () => {
  it("a provider's request to retry is a 503 until Cloud Tasks' last attempt (X-CloudTasks-TaskRetryCount 2), where the stage settles failed", async () => {
    const fake = await startCloudTasksFake({ accessToken: "ya29.test-access-token", retryDelayMs: 10 });
    const retrying = testProviders({ fail: { waveform: () => new ProviderError("retry", "the provider is busy") } });
    const svc = await startTasksService(fake, { providers: retrying.registry });
    try {
      const blob = await seedAudio(svc.deps, "alpha");
      const created = await svc.post("/api/v1/posts", { actor: "ct-r", json: audioPost(blob, { waveform: true }) });
      await fake.settled();
      expect(fake.tasks.at(-1)!.attempts).toEqual([503, 503, 200]);
      expect(retrying.count("waveform")).toBe(3);
      // Each 503 names the policy's wait (5 s, then 20 s) for Cloud Tasks to consider.
      expect(fake.tasks.at(-1)!.retryAfter).toEqual(["5", "20", null]);
      const [stage] = await svc.deps.sql.query(`SELECT status, reason FROM post_stages WHERE rkey = $1`, [created.json.data.postId]);
      expect(stage).toEqual({ status: "failed", reason: "provider_error" });
    } finally {
      await svc.close();
      await fake.close();
    }
  });
});

describe("the system route and a provider's Retry-After", () => {
  it("a provider's refusal with Retry-After longer than the policy's wait is the worker route's 503 Retry-After", async () => {
    const fake = await startCloudTasksFake({ accessToken: "ya29.test-access-token", retryDelayMs: 10 });
    const throttled = testProviders({ fail: { waveform: (call) => (call === 1 ? new ProviderError("retry", "throttled", "provider_error", { retryAfterMs: 40_000 }) : undefined) } });
    const svc = await startTasksService(fake, { providers: throttled.registry });
    try {
      const blob = await seedAudio(svc.deps, "alpha");
      await svc.post("/api/v1/posts", { actor: "ct-ra", json: audioPost(blob, { waveform: true }) });
      await fake.settled();
      expect(fake.tasks.at(-1)!.attempts).toEqual([503, 200]);
      expect(fake.tasks.at(-1)!.retryAfter).toEqual(["40", null]);
    } finally {
      await svc.close();
      await fake.close();
    }
  });
});

// The worker route fails closed (503) while SYSTEM_AUTH_TOKEN is unset, as every system route: test/system-routes-fail-closed.test.ts.

describe("the worker route on the Node host past its idle timeout", () => {
  it("a worker call whose pass outlasts SVC_IDLE_TIMEOUT_MS is answered 200 when the pass ends, not dropped at the idle timeout: it bounds a stalled client, not the host's own work", async () => {
    const fake = await startCloudTasksFake({ accessToken: "ya29.test-access-token", retryDelayMs: 10 });
    // The waveform takes a second from when it is called: more than three idle timeouts.
    const slow = testProviders({ gate: { get waveform() { return new Promise<void>((resolve) => setTimeout(resolve, 1_000)); } } });
    const svc = await startTasksService(fake, { env: { SVC_IDLE_TIMEOUT_MS: "300" }, providers: slow.registry });
    try {
      const created = await svc.post("/api/v1/posts", { actor: "idle-slow", json: audioPost(await seedAudio(svc.deps, "alpha"), { waveform: true }) });
      expect(created.status).toBe(201);
      await fake.settled();
      // One call, answered: a dropped connection is a 0 here, and Cloud Tasks would retry into the running pass.
      expect(fake.tasks.at(-1)!.attempts).toEqual([200]);
      const [stage] = await svc.deps.sql.query(`SELECT status FROM post_stages WHERE rkey = $1`, [created.json.data.postId]);
      expect(stage).toEqual({ status: "ready" });
    } finally {
      await svc.close();
      await fake.close();
    }
  });
});

describe("task queue configuration", () => {
  const errors = () => {
    const lines: string[] = [];
    return { lines, log: { error: (m: string) => void lines.push(m), warn: () => {} } };
  };
  it.each([
    [{ SVC_TASKS_LOCATION: "l", SVC_TASKS_QUEUE: "q" }],
    [{ SVC_TASKS_WORKER_URL: "https://svc.example.com/api/v1/system/process-audio" }],
    [{ SVC_TASKS_QUEUE: "q", SVC_TASKS_WORKER_URL: "https://svc.example.com/api/v1/system/process-audio", SVC_TASKS_PROJECT: "p" }],
  ])("a partial set is a misconfiguration, logged at error level, and task dispatch is off: %j", (env) => {
    const { lines, log } = errors();
    expect(parseProcessingConfig(readVariables(env, () => undefined), log).tasks).toBeUndefined();
    expect(lines.join()).toMatch(/SVC_TASKS_LOCATION, SVC_TASKS_QUEUE and SVC_TASKS_WORKER_URL/);
  });

  it.each([["unset", undefined], ["shorter than 32 characters", "s".repeat(31)]])(
    "a full set without a usable SYSTEM_AUTH_TOKEN (%s) is logged at error level and task dispatch is off, so requested stages settle skipped, never wait for a dispatch that always fails",
    (_, token) => {
      const { lines, log } = errors();
      const env = {
        ...requiredEnv,
        SVC_TASKS_LOCATION: "l",
        SVC_TASKS_QUEUE: "q",
        SVC_TASKS_WORKER_URL: "https://svc.example.com/api/v1/system/process-audio",
        ...(token !== undefined && { SYSTEM_AUTH_TOKEN: token }),
      };
      const config = parseConfig(env, log);
      expect(config.processing.tasks).toBeUndefined();
      expect(dispatchMode(config)).toBe("off");
      expect(lines.join()).toMatch(/the task queue needs SYSTEM_AUTH_TOKEN/);
      // With the token, the same set dispatches through the queue.
      expect(dispatchMode(parseConfig({ ...env, SYSTEM_AUTH_TOKEN: systemToken }, errors().log))).toBe("tasks");
    },
  );

  it("without a configured token or project, the metadata server's are used", async () => {
    const fake = await startCloudTasksFake({ accessToken: "ya29.from-metadata", maxAttempts: 1 });
    try {
      const dispatcher = createCloudTasksDispatcher(
        { location: "l", queue: "q", workerUrl: "http://127.0.0.1:1/api/v1/system/process-audio", baseUrl: fake.url, metadataHost: fake.host },
        systemToken,
      );
      await dispatcher.dispatch({ appId: "alpha", postId: "3kabcdefghijk" });
      expect(fake.tasks[0]!.path).toBe("/v2/projects/metadata-project/locations/l/queues/q/tasks");
      expect(fake.tasks[0]!.authorization).toBe("Bearer ya29.from-metadata");
    } finally {
      await fake.close();
    }
  });
});
