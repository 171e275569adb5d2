import { describe, expect, it } from "vitest";
import { requiredEnv as base } from "../../test/support/config-env";
import { parseConfig } from "../config/parse-config";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, testProviders } from "../../test/support/enrichment-harness";
import { ProviderError } from "../providers/provider-port";
import { dispatchMode } from "./dispatcher";
import { createInlineDispatcher } from "./inline-dispatcher";
import { createWorker } from "./worker";
import { acquireLease, releaseLease } from "./lease";

const queue = { PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/processing" };
const tasks = {
  SVC_TASKS_LOCATION: "l",
  SVC_TASKS_QUEUE: "q",
  SVC_TASKS_WORKER_URL: "https://svc.example.com/api/v1/system/process-audio",
  SYSTEM_AUTH_TOKEN: "t".repeat(32),
};
const quiet = { error() {}, warn() {} };
const mode = (env: Record<string, string>) => dispatchMode(parseConfig({ ...base, ...env }, quiet));

describe("dispatch mode (docs/decisions.md#dispatch-and-the-worker)", () => {
  it.each([
    ["SVC_PROCESSING_INLINE=true wins over every durable dispatcher in development", { SVC_PROCESSING_INLINE: "true", ...queue, ...tasks }, "inline"],
    ["and in test", { NODE_ENV: "test", SVC_PROCESSING_INLINE: "true", ...queue }, "inline"],
    ["in production a durable dispatcher wins over the inline flag", { NODE_ENV: "production", SVC_PROCESSING_INLINE: "true", ...queue }, "sqs"],
    ["in production Cloud Tasks wins over the inline flag too", { NODE_ENV: "production", SVC_PROCESSING_INLINE: "true", ...tasks }, "tasks"],
    ["in production the inline flag alone still runs inline", { NODE_ENV: "production", SVC_PROCESSING_INLINE: "true" }, "inline"],
    ["PROCESSING_QUEUE_URL selects SQS", queue, "sqs"],
    ["the three task variables select Cloud Tasks, with the system token its tasks carry", tasks, "tasks"],
    ["a partial task set leaves dispatch off", { SVC_TASKS_LOCATION: "l", SVC_TASKS_QUEUE: "q" }, "off"],
    ["with no queue, no inline flag and no task variables, dispatch is off", {}, "off"],
  ])("%s", (_, env, expected) => {
    expect(mode(env)).toBe(expected);
  });
});

describe("inline dispatch", () => {
  it("a pass whose provider asks for a retry, or that meets a live lease, is retried in the background, never dropped", async () => {
    const providers = testProviders({ fail: { waveform: (call) => (call === 1 ? new ProviderError("retry", "busy upstream") : undefined) } });
    const h = await startEnrichmentHarness(backends[0]!, { registry: providers.registry });
    try {
      const work = new Set<Promise<unknown>>();
      const dispatcher = createInlineDispatcher(createWorker(h.pass), (p) => work.add(p), { maxAttempts: 4, delayMs: (attempt) => [30, 60, 120][attempt - 1]! });
      const post = await h.createAudioPost({ waveform: true });
      await dispatcher.dispatch(post);
      expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
      await expect.poll(async () => (await h.stages(post.postId)).waveform!.status, { timeout: 5000 }).toBe("ready");
      await Promise.all(work);
      expect(providers.count("waveform")).toBe(2);

      const held = await h.createAudioPost({ waveform: true });
      const lease = await acquireLease(h.sql, "alpha", held.postId, new Date(), 60_000);
      await dispatcher.dispatch(held);
      expect(work.size).toBe(2); // a retry scheduled for it
      expect((await h.stages(held.postId)).waveform!.status).toBe("pending");
      await releaseLease(h.sql, "alpha", held.postId, (lease as { token: string }).token, new Date());
      await expect.poll(async () => (await h.stages(held.postId)).waveform!.status, { timeout: 5000 }).toBe("ready");
    } finally {
      await h.close();
    }
  });
});
