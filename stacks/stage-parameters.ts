import { execFileSync } from "node:child_process";

/** Per-stage values that are not secrets, read from the environment of `sst deploy` (see the README's deploy section). */
export interface StageParameters {
  pdsHost: string;
  appDids: string;
  webhookUrls: string;
  logLevel: string;
  gitSha: string;
  deployedAt: string;
}

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
  };
};

const gitHead = (): string => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
};
