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
  /**
   * The operator's settings (rows of the variable table marked `deploy`: rate limits, providers and models,
   * timeouts, the lease, the webhook retry schedule, the orphan age) set in the deploy's environment, checked as the
   * service checks them.
   */
  settings: Record<string, string>;
  /**
   * The database's `statement_timeout`: SVC_DB_STATEMENT_TIMEOUT_MS, the Data API client's request timeout. A
   * statement the client gave up on otherwise ran on for up to the Data API's 45 s, and AWS refused every call on its
   * transaction meanwhile, the rollback included. A migration sets its own (none).
   */
  statementTimeoutMs: string;
}

/**
 * Each operator's setting the deploy's environment sets, trimmed: a value the service would refuse stops the deploy
 * naming it, as it would stop the service's start; one left unset is the table's default (core/config/variables.ts).
 */
export const stageSettings = (stage: string, env: NodeJS.ProcessEnv): Record<string, string> => {
  const settings: Record<string, string> = {};
  for (const row of configVariables.filter((r) => r.deploy)) {
    const value = env[row.name]?.trim();
    if (value) settings[row.name] = checked(stage, row.name, value);
  }
  return settings;
};

/** A value checked by its row's parser, as the service checks it at start: one it would refuse stops the deploy. */
const checked = (stage: string, name: string, value: string): string => {
  const row = configVariables.find((r) => r.name === name)!;
  row.parse?.(value, (_, message) => {
    throw new Error(`${message} when deploying stage ${stage} (expected ${row.rule})`);
  }, row.name);
  return value;
};

export const stageParameters = (stage: string, env: NodeJS.ProcessEnv = process.env): StageParameters => {
  const pdsHost = env.SVC_PDS_HOST?.trim();
  if (!pdsHost) {
    throw new Error(`SVC_PDS_HOST must be set when deploying stage ${stage}: the host tenant DIDs name as their custody service`);
  }
  const settings = stageSettings(stage, env);
  return {
    // Every function reads these two: a value the service refuses would fail every cold start.
    pdsHost: checked(stage, "SVC_PDS_HOST", pdsHost),
    appDids: env.SVC_APP_DIDS?.trim() ?? "",
    webhookUrls: env.SVC_APP_WEBHOOK_URLS?.trim() ?? "",
    logLevel: checked(stage, "LOG_LEVEL", env.LOG_LEVEL?.trim() || "info"),
    gitSha: env.SVC_GIT_SHA?.trim() || gitHead(),
    deployedAt: new Date().toISOString(),
    settings,
    statementTimeoutMs: settings.SVC_DB_STATEMENT_TIMEOUT_MS ?? String(configVariables.find((row) => row.name === "SVC_DB_STATEMENT_TIMEOUT_MS")!.default),
  };
};

const gitHead = (): string => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
};
