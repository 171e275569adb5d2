import { healthProbeMs } from "../health/probe-within";
import { recordsProbeStatement } from "../health/store-probes";
import type { AwsEnvironment } from "../config/aws-environment";
import { awsEndpoint } from "./aws-endpoint";
import { credentialsOf, signRequest } from "./aws-sigv4";

export interface DataApiTarget {
  resourceArn: string;
  secretArn: string;
  database: string;
  region?: string;
}

export interface SignedProbeOptions {
  /** The function's region, credentials and endpoint overrides (Config's `aws`). */
  aws: AwsEnvironment;
  fetch?: typeof fetch;
  now?: () => Date;
  /** The whole exchange, answer included; /health's own wait (`probeWithin`) is the same by default. */
  timeoutMs?: number;
}

/**
 * Whether any post is stored, asked of the Data API with one signed `ExecuteStatement` (POST /Execute) rather than
 * through its SDK client. It throws on anything but a 200 carrying a boolean: an error status, a redirect (never
 * followed), a timeout.
 */
export const dataApiRecordsProbe = (target: DataApiTarget, options: SignedProbeOptions) => {
  const { aws } = options;
  const fetchImpl = options.fetch ?? fetch;
  return async (): Promise<"empty" | "present"> => {
    const region = target.region ?? aws.region;
    const url = new URL("/Execute", awsEndpoint(aws, "RDS_DATA", `https://rds-data.${region}.amazonaws.com`).url);
    const { resourceArn, secretArn, database } = target;
    const body = JSON.stringify({ resourceArn, secretArn, database, sql: recordsProbeStatement });
    const request = { method: "POST", url, headers: { "content-type": "application/json" }, body };
    const headers = signRequest(request, { service: "rds-data", region }, credentialsOf(aws, "probe the Data API"), (options.now ?? (() => new Date()))());
    const res = await fetchImpl(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(options.timeoutMs ?? healthProbeMs) });
    const text = await res.text();
    if (res.status !== 200) {
      const type = res.headers.get("x-amzn-errortype")?.split(":")[0];
      throw new Error(`Data API ExecuteStatement answered ${res.status}${type ? ` ${type}` : ""}: ${text.slice(0, 200)}`);
    }
    const present = (JSON.parse(text) as { records?: { booleanValue?: boolean }[][] }).records?.[0]?.[0]?.booleanValue;
    if (typeof present !== "boolean") throw new Error(`Data API ExecuteStatement answered no boolean: ${text.slice(0, 200)}`);
    return present ? "present" : "empty";
  };
};
