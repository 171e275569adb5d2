/**
 * Time to ready with real processing (`npm run bench`; alone: `npx tsx bench/time-to-ready.ts`): create a post with
 * a 60 s clip and the stages trim, normalize and waveform, until every stage's `ready` webhook has arrived and the
 * mp3 rendition's first byte has played, with SQS dispatch through fauxqs and the rendition service in a process
 * of its own beside `npm start`'s (ready-stack.ts). p50 and p95 over BENCH_READY_POSTS posts (default 20) at
 * concurrency 1 and 4, against Mux's published time to publish (median 1.8 s, p95 3.6 s), and the median of where
 * the time went, per stage, from both processes' log lines. BENCH_READY_TYPE chooses the clip's type (audio/webm).
 */
import { loadavg } from "node:os";
import type { AcceptedMimeType } from "../core/records/accepted-types";
import { breakdown, clipFor, runPost, upload, type Breakdown, type PostRun, type Uploaded } from "./ready-post";
import { startReadyStack, type ReadyStack } from "./ready-stack";

const posts = Math.max(20, Number(process.env.BENCH_READY_POSTS ?? 20));
const mimeType = (process.env.BENCH_READY_TYPE ?? "audio/webm") as AcceptedMimeType;
const warmup = 2;
const concurrencies = [1, 4];

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};

/** Distinct clips, made two at a time (the machine has two cores), uploaded before any clock starts. */
async function uploads(stack: ReadyStack, count: number, seedBase: number): Promise<Uploaded[]> {
  const clips: Buffer[] = [];
  for (let i = 0; i < count; i += 2) clips.push(...(await Promise.all([clipFor(mimeType, seedBase + i), ...(i + 1 < count ? [clipFor(mimeType, seedBase + i + 1)] : [])])));
  const done: Uploaded[] = [];
  for (const clip of clips) done.push(await upload(stack, clip, mimeType));
  return done;
}

/** `count` posts, `concurrency` at a time, each client starting its next post once its last one played. */
async function round(stack: ReadyStack, ready: Uploaded[], concurrency: number): Promise<PostRun[]> {
  const runs: PostRun[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ready.length) runs.push(await runPost(stack, ready[next++]!));
    }),
  );
  return runs;
}

const ms = (n: number) => `${Math.round(n)} ms`;

function report(concurrency: number, runs: PostRun[], parts: Breakdown[]) {
  const readyMs = runs.map((r) => Math.max(...Object.values(r.ready)) - r.started);
  const playedMs = runs.map((r) => r.playbackFirstByte - r.started);
  const targets = concurrency === 1 ? { p50: 1000, p95: 2000 } : { p50: Infinity, p95: 3600 };
  const meets = (value: number, target: number) => (target === Infinity ? "" : value <= target ? " (met)" : ` (target ${target} ms: missed)`);
  console.log(`\nconcurrency ${concurrency}, ${runs.length} posts of a 60 s ${mimeType} clip, trim + normalize + waveform, then the mp3's first playback`);
  console.table({
    "every stage ready": { p50: ms(percentile(readyMs, 50)), p95: ms(percentile(readyMs, 95)), max: ms(Math.max(...readyMs)) },
    "ready and the mp3 played (time to publish)": {
      p50: ms(percentile(playedMs, 50)) + meets(percentile(playedMs, 50), targets.p50),
      p95: ms(percentile(playedMs, 95)) + meets(percentile(playedMs, 95), targets.p95),
      max: ms(Math.max(...playedMs)),
    },
    "Mux's published time to publish": { p50: "1800 ms", p95: "3600 ms", max: "" },
  });
  const names = [...new Set(parts.flatMap((p) => Object.keys(p)))];
  console.log(`where the time went at concurrency ${concurrency} (ms per post; p50 and p95 of each part on its own, so they do not add up)`);
  console.table(Object.fromEntries(names.map((name) => {
    const values = parts.map((p) => p[name]).filter((v): v is number => v !== undefined);
    return [name, { p50: Math.round(percentile(values, 50)), p95: Math.round(percentile(values, 95)), posts: values.length }];
  })));
}

const stack = await startReadyStack();
try {
  console.log(`time to ready: npm start (${stack.backend}) and npm run rendition, SQS dispatch through fauxqs`);
  let seed = 1;
  const warm = await uploads(stack, warmup, (seed += 1000));
  await round(stack, warm, 1); // first ffmpeg runs, first connections, the tenant's custody: not what a post waits for
  for (const concurrency of concurrencies) {
    const ready = await uploads(stack, posts, (seed += 1000));
    const cpuBefore = await stack.renditionCpuMs();
    const runs = await round(stack, ready, concurrency);
    const cpuPerPost = ((await stack.renditionCpuMs()) - cpuBefore) / runs.length;
    report(concurrency, runs, runs.map((run) => breakdown(run, stack)));
    console.log(`rendition service CPU per post (Node and its ffmpeg runs): ${Math.round(cpuPerPost)} ms; load average ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
  }
} finally {
  await stack.close();
}
