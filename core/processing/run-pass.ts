/**
 * One worker pass over a post (docs/decisions.md#dispatch-and-the-worker): take the post's fenced lease, run its
 * pending stages in order (denoise -> trim -> normalize -> transcribe, waveform), each byte-changing stage on the
 * previous output, settle each stage and write its webhook event together, deliver from the outbox, release the lease. A host that
 * lives on hands its deliveries to its background work (`deps.background`), so no request waits on a receiver.
 * Every way into the worker reaches it through `runJob` (worker.ts). Its providers are the ones it is given, and
 * its time is `deps.now()`.
 */
import { isOwnRendition } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import type { Config } from "../config/types";
import type { Logger } from "../observability/logger";
import { postUri } from "../records/at-uri";
import { recordCid } from "../records/record-cid";
import { transcriptViewSchema } from "../records/transcript-schema";
import type { StrongRef } from "../records/post-schema";
import { buildTranscriptRecord, type TranscriptRecord } from "../records/transcript-record";
import { ProviderError, stageOrder, type AudioRef, type ProviderCall, type Stage } from "../providers/provider-port";
import { buildProvider } from "../providers/build-provider";
import type { ProviderEntry } from "../providers/provider-entry";
import type { RenditionBuilder } from "../providers/rendition-builder";
import { selectProvider } from "../providers/select-provider";
import type { Sql } from "../sql/port";
import type { DeliveryOptions } from "../webhooks/deliver-webhook";
import { deliverEvents } from "../webhooks/outbox";
import type { ClaimedEvent } from "../webhooks/webhook-event";
import { acquireLease, keepLease, LeaseLost, passTimeLimitMs, releaseLeaseSoon } from "./lease";
import { loadPassState, settleStage, storeLoudness, storeTranscript, storeVariant, storeWaveform, type PendingStage } from "./pass-store";
import type { Job } from "./job";
import type { StageReason } from "./stage-state";

/** What a pass runs with: built once per runtime (core/runtime/enrichment/compose-worker.ts). */
export interface PassDeps {
  sql: Sql;
  blobs: BlobStore;
  config: Config;
  log: Logger;
  now: () => Date;
  /** The providers with their adapters: the registry in production, test providers in tests. */
  providers: readonly ProviderEntry[];
  delivery?: Partial<DeliveryOptions>;
  /**
   * Where deliveries go once their settles are committed: a long-lived host's background work, so an inline pass
   * (inside a create or PATCH) answers without waiting on any receiver (docs/decisions.md#webhooks). Without it (a
   * Lambda, frozen once it returns) the pass awaits them; the sweep backs up both.
   */
  background?: (work: Promise<unknown>) => void;
  /**
   * Builds the mp3 rendition of the bytes a pass leaves once it changed them, beside the stages after the last
   * byte-changing one, so the first `format=mp3` playback finds it (docs/decisions.md#rendition-service).
   */
  renditions?: RenditionBuilder;
}

export interface PassOptions {
  /** Epoch ms by which the pass must stop (a Lambda's remaining time); at most passTimeLimitMs from now. */
  deadline?: number;
  /** The queue will not deliver this job again: a provider's request to retry settles the stage failed instead. */
  finalAttempt?: boolean;
  /** Adds fields to the job's summary line (the lease's time, `leaseMs`). */
  annotate?: (fields: Record<string, unknown>) => void;
}

/**
 * - `ran`: stages ran (or there was nothing to do: `ran` false);
 * - `busy`: another pass holds the lease (or took it from this one): the job is retried later (retry-policy.ts);
 * - `retry`: a provider asked for a retry, or time ran out; retry later.
 */
export type PassOutcome = { kind: "done"; ran: boolean } | { kind: "busy" } | Retry;

/** A pass to run again later: `retryAfterMs` when the provider timed its refusal (its `Retry-After`). */
export type Retry = { kind: "retry"; retryAfterMs?: number };

/** Stop starting stages this close to the deadline: the queue retries what is left. */
const deadlineMarginMs = 5_000;

export const runPass = async (deps: PassDeps, job: Job, options: PassOptions = {}): Promise<PassOutcome> => {
  const { sql, log } = deps;
  const { appId, postId: rkey } = job;
  const deadline = Math.min(options.deadline ?? Infinity, deps.now().getTime() + passTimeLimitMs);
  const timing = deps.config.processing.lease;
  const leaseStarted = performance.now();
  const lease = await acquireLease(sql, appId, rkey, deps.now(), timing.ms);
  options.annotate?.({ leaseMs: Math.round(performance.now() - leaseStarted) });
  if (lease.kind === "no-post") return { kind: "done", ran: false };
  if (lease.kind === "busy") {
    log.info("processing job left to the pass that holds the lease", { appId, postId: rkey });
    return { kind: "busy" };
  }
  const { token } = lease;
  const heartbeat = keepLease({ sql, appId, rkey, token, now: deps.now, timing }, log);
  const deliveries: Promise<void>[] = [];
  const deliver = (events: ClaimedEvent[]) => {
    if (events.length) deliveries.push(deliverEvents({ sql, webhooks: deps.config.processing.webhooks, retry: deps.config.processing.webhookRetry, log, delivery: deps.delivery, now: deps.now }, events));
  };
  let ran = false;
  const renditions = renditionsAhead(deps, appId, rkey);
  try {
    // Loop: a byte change sends derived stages back to pending, and a PATCH may add stages while we hold the lease.
    for (;;) {
      const state = await loadPassState(sql, appId, rkey);
      if (!state || state.pending.length === 0) {
        renditions.after(state?.audio ?? null, undefined);
        break;
      }
      const next = stageOrder.map((s) => state.pending.find((p) => p.stage === s)).find((p): p is PendingStage => p !== undefined)!;
      renditions.after(state.audio, next.stage);
      if (deps.now().getTime() > deadline - deadlineMarginMs) return { kind: "retry" };
      // Where a stage's time goes, on its log line: the provider's call, then the settling transaction.
      const stageStarted = performance.now();
      const settle = async (status: "ready" | "failed", reason?: StageReason, artifact?: (tx: Sql) => Promise<void>) => {
        const settleStarted = performance.now();
        const events = await sql.transaction(async (tx) => {
          await artifact?.(tx);
          const result = await settleStage(tx, {
            appId, rkey, token, stage: next.stage, generation: next.generation, status, reason, now: deps.now(),
            webhooks: deps.config.processing.webhooks.has(appId),
          });
          if (!result.settled) throw new LeaseLost();
          return result.events;
        });
        ran = true;
        const providerMs = Math.round(settleStarted - stageStarted);
        const settleMs = Math.round(performance.now() - settleStarted);
        log.info("stage settled", { appId, postId: rkey, stage: next.stage, status, ...(reason && { reason }), providerMs, settleMs });
        deliver(events);
      };
      const then = stageOrder.filter((s) => s !== next.stage && state.pending.some((p) => p.stage === s));
      const outcome = await runStage({ deps, job, stage: next.stage, then, audio: state.audio, postCid: state.postCid, token, deadline, lost: heartbeat.lost, finalAttempt: options.finalAttempt === true, settle });
      if (heartbeat.lost.aborted) throw new LeaseLost();
      if (outcome !== "settled") return outcome;
    }
    return { kind: "done", ran };
  } catch (error) {
    // A provider stopped by the lost lease fails in its own way (an abort, a provider error): the loss is the cause.
    if (error instanceof LeaseLost || heartbeat.lost.aborted) {
      log.warn("processing pass lost its lease; another pass continues", { appId, postId: rkey });
      return { kind: "busy" };
    }
    throw error;
  } finally {
    await heartbeat.stop();
    await releaseLeaseSoon(sql, { appId, rkey, token }, deps.now).catch((error: unknown) => log.warn("lease not released; it lapses", { error: String(error) }));
    const rest = Promise.all([...deliveries, renditions.built()]);
    if (deps.background) deps.background(rest);
    else await rest;
  }
};

const byteChanging: ReadonlySet<Stage> = new Set(["denoise", "trim", "normalize"]);

/**
 * The mp3 rendition of the bytes the pass leaves, started once no byte-changing stage is next and the bytes are not
 * the ones the pass began with; a failure is logged (the first playback builds it then). An mp3 is its own rendition:
 * nothing to build.
 */
const renditionsAhead = (deps: PassDeps, appId: string, rkey: string) => {
  let first: string | undefined;
  let building: Promise<void> | undefined;
  return {
    after(audio: AudioRef | null, next: Stage | undefined) {
      if (!audio) return;
      first ??= audio.cid;
      if (building || !deps.renditions || isOwnRendition(audio.mimeType, "mp3") || audio.cid === first || (next && byteChanging.has(next))) return;
      building = deps.renditions.buildMp3(audio).catch((error: unknown) => {
        deps.log.warn("mp3 rendition not built ahead of playback", { appId, postId: rkey, error: error instanceof Error ? error.message : String(error) });
      });
    },
    built: () => building ?? Promise.resolve(),
  };
};

/**
 * The CID of a transcript record its lexicon accepts. A provider's transcript that is no valid record, or cannot be
 * encoded (a non-finite time), is the provider's malformed answer: it fails the stage now, where any other error
 * would leave it pending for the sweep, and a queue's every retry would pay the provider again.
 */
const checkedTranscriptCid = (record: TranscriptRecord): string => {
  // The lexicon's own shapes (core/records/transcript-schema.ts), not its validator: the stage function's bundle
  // carries no lexicon library.
  const checked = transcriptViewSchema.safeParse({ text: record.text, lang: record.lang, segments: record.segments });
  const refuse = (why: string, cause?: unknown) => new ProviderError("fail", `transcript record refused: ${why}`, "provider_error", { cause });
  if (!checked.success) throw refuse(checked.error.issues.map((issue) => `${issue.path.join("/")}: ${issue.message}`).join("; "));
  try {
    return recordCid(record);
  } catch (error) {
    throw refuse(error instanceof Error ? error.message : String(error), error);
  }
};

type SettleFn = (status: "ready" | "failed", reason?: StageReason, artifact?: (tx: Sql) => Promise<void>) => Promise<void>;

/** One stage of a pass: the post's current bytes (null without audio), the lease it runs under, how to settle it. */
interface StageRun {
  deps: PassDeps;
  job: Job;
  stage: Stage;
  /** The pending stages after this one, in order. */
  then: Stage[];
  audio: AudioRef | null;
  postCid: string;
  token: string;
  /** Epoch ms by which the provider must answer. */
  deadline: number;
  /** Aborted when the pass loses its lease: the provider call stops with it. */
  lost: AbortSignal;
  /** The last attempt: a provider's request to retry settles the stage failed instead. */
  finalAttempt: boolean;
  settle: SettleFn;
}

/**
 * Runs one stage and settles it; "retry" when the provider asks for another attempt and the stage stays pending
 * (on the final attempt it settles failed instead).
 */
const runStage = async ({ deps, job, stage, then, audio, postCid, token, deadline, lost, finalAttempt, settle }: StageRun): Promise<"settled" | Retry> => {
  const { appId, postId: rkey } = job;
  if (!audio) {
    await settle("failed", "provider_error");
    return "settled";
  }
  const selection = selectProvider(stage, appId, deps.config, deps.log, deps.providers);
  if (!selection.ok) {
    // The deployment changed since the request: the stage cannot run here any more.
    await settle("failed", selection.reason);
    return "settled";
  }
  const call: ProviderCall = { signal: AbortSignal.any([AbortSignal.timeout(Math.max(1, deadline - deps.now().getTime())), lost]), deadline, then };
  const context = { config: deps.config, blobs: deps.blobs };
  try {
    switch (stage) {
      case "denoise":
      case "trim": {
        const out =
          stage === "denoise"
            ? await buildProvider("denoise", selection, context, deps.providers).denoise(audio, call)
            : await buildProvider("trim", selection, context, deps.providers).trim(audio, call);
        const changed = out.cid !== audio.cid || out.mimeType !== audio.mimeType;
        await settle("ready", undefined, changed ? (tx) => storeVariant(tx, deps.blobs, { appId, rkey, token, stage, audio: out, now: deps.now() }) : undefined);
        return "settled";
      }
      case "normalize": {
        const { audio: out, loudness } = await buildProvider("normalize", selection, context, deps.providers).normalize(audio, call);
        const changed = out.cid !== audio.cid || out.mimeType !== audio.mimeType;
        await settle("ready", undefined, (tx) =>
          changed ? storeVariant(tx, deps.blobs, { appId, rkey, token, stage, audio: out, loudness, now: deps.now() }) : storeLoudness(tx, appId, rkey, token, loudness),
        );
        return "settled";
      }
      case "transcribe": {
        // Asked before the provider is paid: a tenant without a DID (offboarded) has no subject for the record, and
        // no retry gives it one.
        const did = deps.config.tenants.get(appId)?.did;
        if (!did) throw new ProviderError("fail", `tenant ${appId} has no DID to address the transcript's subject`, "provider_error");
        const transcript = await buildProvider("transcribe", selection, context, deps.providers).transcribe(audio, call);
        const record = buildTranscriptRecord({ uri: postUri(did, rkey) as StrongRef["uri"], cid: postCid }, transcript, deps.now());
        const cid = checkedTranscriptCid(record);
        await settle("ready", undefined, (tx) => storeTranscript(tx, appId, rkey, record, cid, deps.now()));
        return "settled";
      }
      case "waveform": {
        const waveform = await buildProvider("waveform", selection, context, deps.providers).waveform(audio, call);
        await settle("ready", undefined, (tx) => storeWaveform(tx, appId, rkey, token, waveform));
        return "settled";
      }
    }
  } catch (error) {
    if (!(error instanceof ProviderError) || lost.aborted) throw error;
    const { disposition, retryAfterMs } = error;
    deps.log.warn("provider failed", { appId, postId: rkey, stage, disposition, error: error.message, retryAfterMs });
    if (disposition === "fail" || finalAttempt) {
      await settle("failed", error.reason);
      return "settled";
    }
    return { kind: "retry", retryAfterMs };
  }
};
