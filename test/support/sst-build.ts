import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { startStsStandIn } from "./sts-stand-in";

const root = path.resolve(import.meta.dirname, "../..");
export const appName = "audio-post-service";

export type CfnValue = string | number | boolean | null | CfnValue[] | { [key: string]: CfnValue };
export interface CfnResource {
  Type: string;
  Properties: Record<string, any>;
  DependsOn?: string[];
}
export interface Deployment {
  stage: string;
  templatePath: string;
  resources: Record<string, CfnResource>;
  /** The directory of a function's code asset, as CloudFormation would upload it. */
  assetDir(logicalId: string): string;
  buildMs: number;
}

/**
 * `sst build` offline, as CI runs it: dummy credentials, a loopback STS stand-in for the one call it makes
 * (GetCallerIdentity), NODE_ENV=test. It exits 0 even when it built nothing, so the template file is checked.
 */
export const sstBuild = async (stage: string, env: Record<string, string> = {}): Promise<Deployment> => {
  const sts = await startStsStandIn();
  const templatePath = path.join(root, ".sst", "dist", `${stage}-${appName}-service.template.json`);
  await rm(templatePath, { force: true });
  const started = performance.now();
  try {
    await promisify(execFile)(process.execPath, [path.join(root, "node_modules/sst/cli/sst.js"), "build", "--stage", stage], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "test",
        SST_TELEMETRY_DISABLED: "1",
        AWS_ACCESS_KEY_ID: "offline",
        AWS_SECRET_ACCESS_KEY: "offline",
        AWS_REGION: "us-east-1",
        AWS_ENDPOINT_URL_STS: sts.endpoint,
        ...env,
      },
    });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`sst build failed:\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`, { cause: error });
  } finally {
    await sts.stop();
  }
  const buildMs = performance.now() - started;
  if (!existsSync(templatePath)) throw new Error(`sst build exited 0 but wrote no template at ${templatePath}`);
  const template = JSON.parse(await readFile(templatePath, "utf8")) as { Resources: Record<string, CfnResource> };
  return {
    stage,
    templatePath,
    resources: template.Resources,
    buildMs,
    assetDir(logicalId) {
      const key = template.Resources[logicalId]?.Properties.Code?.S3Key as string | undefined;
      if (!key) throw new Error(`${logicalId} has no code asset`);
      return path.join(root, ".sst", "dist", `asset.${key.replace(/\.zip$/, "")}`);
    },
  };
};
