/**
 * Request-time decisions for each requested stage: `pending` when a provider can run it and work can be
 * dispatched, else `skipped` with its reason (no provider, a misconfigured one, or dispatch off).
 */
import type { Config } from "../config/types";
import type { Stage } from "../providers/provider-port";
import type { Logger } from "../observability/logger";
import { selectProvider, type ProviderChoice } from "../providers/select-provider";
import type { StageDecision } from "./stage-state";

export const planStages = (
  stages: readonly Stage[],
  appId: string,
  config: Config,
  dispatchOn: boolean,
  log: Pick<Logger, "error">,
  registry?: readonly ProviderChoice[],
): StageDecision[] =>
  stages.map((stage) => {
    const selection = selectProvider(stage, appId, config, log, registry);
    if (!selection.ok) return { stage, status: "skipped", reason: selection.reason };
    if (!dispatchOn) return { stage, status: "skipped", reason: "dispatch_off" };
    return { stage, status: "pending" };
  });
