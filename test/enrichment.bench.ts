import { bench, describe } from "vitest";
import { startEnrichmentWorkers } from "../core/runtime/node/enrichment-workers";
import { backends, migratedDatabase } from "./support/databases";
import { allStages } from "./support/enrichment-harness";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startSqsEmulator } from "./support/sqs-emulator";
import { startTestService, type TestService } from "./support/test-service";

/**
 * Time from create to every stage `ready` (stub providers), per dispatch mode: inline (the create answers after the
 * pass) and SQS through fauxqs with the Node host's consumer. p50 and p95 over at least 50 posts are printed.
 */
const posts = 60;
const results: Record<string, { posts: number; p50_ms: string; p95_ms: string; max_ms: string }> = {};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const summarise = (name: string, samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  results[name] = { posts: sorted.length, p50_ms: percentile(sorted, 50).toFixed(1), p95_ms: percentile(sorted, 95).toFixed(1), max_ms: sorted.at(-1)!.toFixed(1) };
};

const createAndWait = async (svc: TestService, actor: string, samples: number[]) => {
  const blob = await seedAudio(svc.deps, "alpha");
  const started = performance.now();
  const res = await svc.post("/api/v1/posts", { actor, json: audioPost(blob, allStages) });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.body.toString()}`);
  const postId = res.json.data.postId as string;
  for (;;) {
    const [row] = await svc.deps.sql.query(`SELECT count(*) FILTER (WHERE status = 'ready') AS ready FROM post_stages WHERE rkey = $1`, [postId]);
    // Every stage asked for, however many there are (a fifth, normalize, left a fixed 4 waiting for ever).
    if (Number(row!.ready) === Object.keys(allStages).length) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  samples.push(performance.now() - started);
};

/** Measures the whole run once inside a single bench iteration (vitest's own timing is of the whole run). */
const once = { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 };

describe("create -> every stage ready (stub providers)", () => {
  bench(
    "inline dispatch",
    async () => {
      const svc = await startTestService({ driver: "node", sql: () => migratedDatabase(backends[0]!), env: { SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true" } });
      try {
        const samples: number[] = [];
        for (let i = 0; i < posts; i++) await createAndWait(svc, `bench-inline-${i}`, samples);
        summarise("inline", samples);
      } finally {
        await svc.close();
      }
    },
    once,
  );

  bench(
    "SQS dispatch (fauxqs, the Node host's consumer)",
    async () => {
      const sqs = await startSqsEmulator();
      const svc = await startTestService({
        driver: "node",
        sql: () => migratedDatabase(backends[0]!),
        env: { SVC_PROCESSING_STUB: "true", PROCESSING_QUEUE_URL: sqs.queueUrl },
        enrichment: { sqs: sqs.client },
      });
      const workers = startEnrichmentWorkers(svc.deps, { sqs: sqs.client, waitSeconds: 1 });
      try {
        const samples: number[] = [];
        for (let i = 0; i < posts; i++) await createAndWait(svc, `bench-sqs-${i}`, samples);
        summarise("sqs", samples);
        console.table(results);
      } finally {
        await workers.stop();
        await svc.close();
        await sqs.close();
      }
    },
    once,
  );
});
