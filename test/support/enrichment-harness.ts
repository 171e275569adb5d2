/** In-process harness for the worker pass: a migrated database, a file blob store, a webhook receiver, test providers. */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { rawCid } from "../../core/blobs/raw-cid";
import { blobKey } from "../../core/blobs/blob-key";
import type { BlobStore } from "../../core/blobs/blob-store";
import { createFsBlobStore } from "../../core/blobs/fs-blob-store";
import { parseConfig } from "../../core/config/parse-config";
import { planStages } from "../../core/processing/plan-stages";
import { requestStagesIfAuthor } from "../../core/processing/request-stages";
import type { PassDeps } from "../../core/processing/run-pass";
import { requestedStages } from "../../core/processing/stage-state";
import { insertPost } from "../../core/posts/insert-post";
import { stageOrder, type AudioRef, type ProviderCall, type Stage } from "../../core/providers/provider-port";
import type { ProviderEntry, ProviderFactories } from "../../core/providers/provider-entry";
import { providerRegistry } from "../../core/providers/provider-registry";
import { stubTranscriber, stubWaveform } from "../../core/providers/stub-providers";
import { buildPostRecord } from "../../core/records/post-schema";
import { recordCid } from "../../core/records/record-cid";
import { nextTid } from "../../core/records/tid";
import type { SqlBackend } from "../../core/sql/port";
import { migratedDatabase, type DatabaseBackend } from "./databases";
import { audioPost, seedAudio } from "./seeded-audio";
import { startWebhookReceiver, type ReceivedWebhook } from "./webhook-receiver";

export const webhookSecret = "whsec-test-secret-0123456789abcdef0123";
export const allStages = Object.fromEntries(stageOrder.map((stage) => [stage, true])) as Record<Stage, true>;

export const quietLog = { debug() {}, info() {}, warn() {}, error() {} };

/** Writes new bytes derived from the input (a byte-changing provider that really changes the bytes). */
const changeBytes = async (blobs: BlobStore, audio: AudioRef, salt: string): Promise<AudioRef> => {
  const read = await blobs.read(blobKey(audio.appId, audio.cid));
  const input = await buffer(read!.stream);
  const output = Buffer.concat([input, Buffer.from(salt)]);
  const cid = rawCid(output);
  await blobs.writeAtomic(blobKey(audio.appId, cid), Readable.from([output]));
  return { ...audio, cid, size: output.length };
};

/** One provider named `test` for every stage; `denoise` and `trim` change the bytes unless told otherwise. */
/** What the test normalizer reports of every clip. */
export const testLoudness = {
  integratedLufs: -16,
  truePeakDbtp: -1.5,
  rangeLu: 4.2,
  before: { integratedLufs: -31.2, truePeakDbtp: -9.8, rangeLu: 4.1 },
};

/** Rejects with the signal's reason once it aborts. */
const aborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

export const testProviders = (opts: { changeBytes?: boolean; fail?: Partial<Record<Stage, (call: number) => Error | undefined>>; gate?: Partial<Record<Stage, Promise<void>>> } = {}) => {
  const calls: { stage: Stage; cid: string; then?: readonly Stage[]; signal?: AbortSignal }[] = [];
  const count = (stage: Stage) => calls.filter((c) => c.stage === stage).length;
  const enter = async (stage: Stage, audio: AudioRef, call?: ProviderCall) => {
    calls.push({ stage, cid: audio.cid, then: call?.then, signal: call?.signal });
    // A gated call stops when its signal aborts, as a real provider's request does.
    const gate = opts.gate?.[stage];
    if (gate) await (call ? Promise.race([gate, aborted(call.signal)]) : gate);
    const error = opts.fail?.[stage]?.(count(stage));
    if (error) throw error;
  };
  const bytes = (stage: Stage) => (ctx: { blobs: BlobStore }) => ({
    name: "test",
    async run(audio: AudioRef, call?: ProviderCall) {
      await enter(stage, audio, call);
      return opts.changeBytes === false ? audio : changeBytes(ctx.blobs, audio, `${stage}-${createHash("sha1").update(audio.cid).digest("hex").slice(0, 6)}`);
    },
  });
  const adapters: ProviderFactories = {
    denoise: (ctx) => {
      const p = bytes("denoise")(ctx);
      return { name: p.name, denoise: p.run };
    },
    trim: (ctx) => {
      const p = bytes("trim")(ctx);
      return { name: p.name, trim: p.run };
    },
    normalize: (ctx) => {
      const p = bytes("normalize")(ctx);
      return { name: p.name, normalize: async (audio, call) => ({ audio: await p.run(audio, call), loudness: testLoudness }) };
    },
    transcribe: () => ({
      name: "test",
      transcribe: async (audio, call) => {
        await enter("transcribe", audio, call);
        return stubTranscriber("test-model").transcribe(audio, { signal: new AbortController().signal, deadline: Infinity });
      },
    }),
    waveform: () => ({
      name: "test",
      waveform: async (audio, call) => {
        await enter("waveform", audio, call);
        return stubWaveform(audio);
      },
    }),
  };
  const registry: ProviderEntry[] = [
    { name: "test", stages: stageOrder, explicitOnly: false, available: () => true, adapters },
  ];
  return { registry, calls, count };
};

export const startEnrichmentHarness = async (
  backend: Pick<DatabaseBackend, "name" | "open">,
  opts: { registry?: ProviderEntry[]; env?: Record<string, string>; respond?: Parameters<typeof startWebhookReceiver>[0] } = {},
) => {
  const sql: SqlBackend = await migratedDatabase(backend);
  const dir = await mkdtemp(path.join(tmpdir(), "svc-enrich-"));
  const blobs = createFsBlobStore(dir);
  const receiver = await startWebhookReceiver(opts.respond);
  const config = parseConfig(
    {
      DATABASE_URL: "pglite://memory",
      SVC_BLOB_DIR: dir,
      SVC_PUBLIC_BASE_URL: "http://127.0.0.1:1",
      SVC_PDS_HOST: "pds.test",
      SVC_PLAYBACK_SIGNING_KEY: "k".repeat(32),
      SVC_APP_TOKENS: `alpha:${"a".repeat(40)},beta:${"b".repeat(40)}`,
      SVC_APP_DIDS: "alpha:did:web:alpha.test,beta:did:web:beta.test",
      SVC_APP_WEBHOOK_URLS: `alpha:${receiver.url}`,
      SVC_APP_WEBHOOK_SECRETS: `alpha:${webhookSecret}`,
      ...opts.env,
    },
    quietLog,
  );
  let clock: number | undefined;
  const now = () => (clock === undefined ? new Date() : new Date(clock));
  const pass: PassDeps = { sql, blobs, config, log: quietLog, now, providers: opts.registry ?? providerRegistry, delivery: { backoffMs: [20, 50], timeoutMs: 1000 } };

  /** Creates an audio post of `alpha` by `author`, with the stages decided as a request would (dispatch on). */
  const createAudioPost = async (processing?: Record<string, boolean>, author = "author") => {
    const blob = await seedAudio({ sql, blobs }, "alpha");
    const body = audioPost(blob, processing);
    const record = buildPostRecord(body as Parameters<typeof buildPostRecord>[0], now());
    const rkey = nextTid();
    const decisions = planStages(requestedStages(processing), "alpha", config, true, quietLog, opts.registry);
    await insertPost(sql, { appId: "alpha", rkey, record, cid: recordCid(record), authorId: author, authorDid: null }, undefined, {
      decisions,
      now: now(),
      webhooks: true,
    });
    return { appId: "alpha", postId: rkey, blob };
  };

  /** A PATCH's write (the author asking for stages again). */
  const request = (postId: string, processing: Record<string, boolean>) =>
    requestStagesIfAuthor(sql, {
      appId: "alpha",
      rkey: postId,
      actor: "author",
      decisions: planStages(requestedStages(processing), "alpha", config, true, quietLog, opts.registry),
      now: now(),
      webhooks: true,
    });

  const stages = async (postId: string) =>
    Object.fromEntries(
      (await sql.query<{ stage: string; status: string; reason: string | null; generation: number }>(
        `SELECT stage, status, reason, generation FROM post_stages WHERE app_id = 'alpha' AND rkey = $1 ORDER BY stage`,
        [postId],
      )).map((r) => [r.stage, { status: r.status, reason: r.reason, generation: r.generation }]),
    );

  const events = (postId: string) =>
    sql.query<{ event_id: string; stage: string; status: string; outcome: string | null }>(
      `SELECT event_id, stage, status, outcome FROM webhook_events WHERE rkey = $1 ORDER BY occurred_at, stage`,
      [postId],
    );

  const hooksFor = (postId: string): ReceivedWebhook[] => receiver.received.filter((h) => h.json.postId === postId);

  return {
    sql,
    blobs,
    config,
    pass,
    receiver,
    createAudioPost,
    request,
    stages,
    events,
    hooksFor,
    setClock: (ms: number | undefined) => void (clock = ms),
    async close() {
      await receiver.close();
      await sql.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

export type EnrichmentHarness = Awaited<ReturnType<typeof startEnrichmentHarness>>;
