/**
 * What a hand-signed AWS request (SSM at cold start, /health's probes) needs from the environment Lambda gives a
 * function: its region, its credentials, and endpoint overrides found as the AWS SDK finds them. The SDK's own clients
 * read the same variables themselves.
 */
import type { Fail } from "./variable-parsers";
import { readVariables, type ReadVariable } from "./read-variables";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Lambda's role credentials are temporary: the token is sent as `x-amz-security-token` and signed. */
  sessionToken?: string;
}

export type AwsService = "SSM" | "RDS_DATA" | "S3";

export interface AwsEnvironment {
  region: string;
  /** `AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL` (an emulator); absent, AWS's own endpoint. */
  endpoints: Partial<Record<AwsService, string>>;
  /** Absent when the environment holds none: a signed call then fails, naming what it was for. */
  credentials?: AwsCredentials;
}

export const awsEnvironmentOf = (read: ReadVariable): AwsEnvironment => {
  const shared = read("AWS_ENDPOINT_URL");
  const endpoints: Partial<Record<AwsService, string>> = {};
  for (const [service, own] of [["SSM", read("AWS_ENDPOINT_URL_SSM")], ["RDS_DATA", read("AWS_ENDPOINT_URL_RDS_DATA")], ["S3", read("AWS_ENDPOINT_URL_S3")]] as const) {
    const endpoint = own ?? shared;
    if (endpoint !== undefined) endpoints[service] = endpoint;
  }
  const accessKeyId = read("AWS_ACCESS_KEY_ID");
  const secretAccessKey = read("AWS_SECRET_ACCESS_KEY");
  const sessionToken = read("AWS_SESSION_TOKEN");
  return {
    region: read("AWS_REGION"),
    endpoints,
    ...(accessKeyId !== undefined && secretAccessKey !== undefined && { credentials: { accessKeyId, secretAccessKey, ...(sessionToken !== undefined && { sessionToken }) } }),
  };
};

/** Before the configuration is parsed (SSM at cold start): the AWS rows alone; a bad value elsewhere is the parse's to report. */
export const awsEnvironment = (env: NodeJS.ProcessEnv, fail: Fail = () => undefined): AwsEnvironment => awsEnvironmentOf(readVariables(env, fail));
