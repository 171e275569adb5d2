import { execFileSync } from "node:child_process";
import { configVariables } from "../core/config/variables";

/** Per-stage values that are not secrets, read from the environment of `sst deploy` (see the README's deploy section). */
export interface StageParameters {
  pdsHost: string;
  appDids: string;
  webhookUrls: string;
  logLevel: string;
  gitSha: string;
  deployedAt: string;
  /** The rate limits (rows of the `limits` scope) set in the deploy's environment, checked as the service checks them. */
  limits: Record<string, string>;
}

/**
 * Each rate limit the deploy's environment sets, as it was written: a malformed one stops the deploy naming it, as
 * it would stop the service's start; one left unset is the interface's default (core/config/variables.ts).
 */
export const stageLimits = (stage: string, env: NodeJS.ProcessEnv): Record<string, string> => {
  const limits: Record<string, string> = {};
  for (const row of configVariables.filter((r) => r.scopes.includes("limits"))) {
    const value = env[row.name]?.trim();
    if (!value) continue;
    row.parse!(value, (_, message) => {
      throw new Error(`${message} when deploying stage ${stage} (expected ${row.rule})`);
    }, row.name);
    limits[row.name] = value;
  }
  return limits;
};

export const stageParameters = (stage: string, env: NodeJS.ProcessEnv = process.env): StageParameters => {
  const pdsHost = env.SVC_PDS_HOST?.trim();
  if (!pdsHost) {
    throw new Error(`SVC_PDS_HOST must be set when deploying stage ${stage}: the host tenant DIDs name as their custody service`);
  }
  return {
    pdsHost,
    appDids: env.SVC_APP_DIDS?.trim() ?? "",
    webhookUrls: env.SVC_APP_WEBHOOK_URLS?.trim() ?? "",
    logLevel: env.LOG_LEVEL?.trim() || "info",
    gitSha: env.SVC_GIT_SHA?.trim() || gitHead(),
    deployedAt: new Date().toISOString(),
    limits: stageLimits(stage, env),
  };
};

const gitHead = (): string => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
};
