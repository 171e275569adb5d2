/**
 * The Node host's idle timeout is for a client that stalls: once a request's body is in, it does not cut the
 * connection while the host works on the answer. The task queue's worker route runs a pass for minutes; cut off at
 * the idle timeout, every real transcription looked to Cloud Tasks like a failed task.
 */
import { describe, expect, it } from "vitest";
import { startCloudTasksFake } from "./support/cloud-tasks-fake";
import { backends, migratedDatabase } from "./support/databases";
import { testProviders } from "./support/enrichment-harness";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService } from "./support/test-service";

describe("the idle timeout once a request's body is in", () => {
  it("a worker call whose pass outlasts SVC_IDLE_TIMEOUT_MS is answered 200 when the pass ends, not dropped at the idle timeout", async () => {
    const fake = await startCloudTasksFake({ accessToken: "ya29.test-access-token", retryDelayMs: 10 });
    // The waveform takes a second from when it is called: more than three idle timeouts.
    const slow = testProviders({ gate: { get waveform() { return new Promise<void>((resolve) => setTimeout(resolve, 1_000)); } } });
    const svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backends[0]!),
      env: {
        SVC_TASKS_PROJECT: "proj-1",
        SVC_TASKS_LOCATION: "europe-west1",
        SVC_TASKS_QUEUE: "processing",
        SVC_TASKS_ACCESS_TOKEN: "ya29.test-access-token",
        CLOUD_TASKS_BASE_URL: fake.url,
        SVC_IDLE_TIMEOUT_MS: "300",
      },
      configure: (env, baseUrl) => void (env.SVC_TASKS_WORKER_URL = `${baseUrl}/api/v1/system/process-audio`),
      enrichment: { providers: slow.registry },
    });
    try {
      const blob = await seedAudio(svc.deps, "alpha");
      const created = await svc.post("/api/v1/posts", { actor: "idle-slow", json: audioPost(blob, { waveform: true }) });
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
