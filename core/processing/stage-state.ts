/**
 * The processing stage state machine (docs/decisions.md#processing). A request moves a stage to
 * `pending` (queued) or `skipped` (cannot run here); the worker settles `pending` as `ready` or `failed`; a
 * byte-changing stage that changes the bytes sends the `ready` stages that describe them (the derived ones, and
 * normalize) back to `pending`. Requesting a stage
 * that is `pending` changes nothing; requesting a settled one runs it again.
 */
import { bytesDescribingStages, stageOrder, type Stage } from "../providers/provider-port";
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

/** The stages a `processing` opt-in turns on, in pass order. */
export const requestedStages = (processing: ProcessingRequest | undefined): Stage[] =>
  processing ? stageOrder.filter((stage) => processing[stage] === true) : [];

/** A request applied to a stage's current status: null when it changes nothing (a pending stage stays as it is). */
export const onRequest = (current: StageStatus | undefined, decision: StageDecision): StageDecision | null =>
  current === "pending" ? null : decision;

/** The worker's settle of a pending stage; anything else is not a transition. */
export const canSettle = (current: StageStatus | undefined): boolean => current === "pending";

/** The stages recomputed when `changedBy` produced new bytes: those that describe the bytes, other than itself. */
export const recomputedAfter = (changedBy: Stage): Stage[] => bytesDescribingStages.filter((stage) => stage !== changedBy);

/** After `changedBy` produced new bytes, the state of `stage`: a ready stage that describes the bytes is recomputed. */
export const onBytesChanged = (changedBy: Stage, stage: Stage, current: StageStatus): StageStatus =>
  recomputedAfter(changedBy).includes(stage) && current === "ready" ? "pending" : current;
