/**
 * The processing stage state machine (spec section 3, docs/decisions.md#processing). A request moves a stage to
 * `pending` (queued) or `skipped` (cannot run here); the worker settles `pending` as `ready` or `failed`; a
 * byte-changing stage that changes the bytes sends `ready` derived stages back to `pending`. Requesting a stage
 * that is `pending` changes nothing; requesting a settled one runs it again.
 */
import { byteChangingStages, stageOrder, type Stage } from "../providers/provider-port";
import type { ProcessingRequest } from "../records/post-schema";

export type StageStatus = "pending" | "ready" | "failed" | "skipped";
export type StageReason = "no_provider" | "provider_misconfigured" | "dispatch_off" | "provider_error" | "timeout" | "dead_letter";

export interface StageState {
  status: StageStatus;
  updatedAt: string;
  reason?: StageReason;
}

/** What a request asks for one stage: queued, or skipped with why. */
export type StageDecision = { stage: Stage; status: "pending" } | { stage: Stage; status: "skipped"; reason: StageReason };

export const derivedStages: readonly Stage[] = stageOrder.filter((s) => !byteChangingStages.includes(s));

/** The stages a `processing` opt-in turns on, in pass order. */
export const requestedStages = (processing: ProcessingRequest | undefined): Stage[] =>
  processing ? stageOrder.filter((stage) => processing[stage] === true) : [];

/** A request applied to a stage's current status: null when it changes nothing (a pending stage stays as it is). */
export const onRequest = (current: StageStatus | undefined, decision: StageDecision): StageDecision | null =>
  current === "pending" ? null : decision;

/** The worker's settle of a pending stage; anything else is not a transition. */
export const canSettle = (current: StageStatus | undefined): boolean => current === "pending";

/** After a byte-changing stage produced new bytes: derived stages that were ready are recomputed. */
export const onBytesChanged = (stage: Stage, current: StageStatus): StageStatus =>
  derivedStages.includes(stage) && current === "ready" ? "pending" : current;
