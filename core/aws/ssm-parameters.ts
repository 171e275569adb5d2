import type { AwsEnvironment } from "../config/aws-environment";
import { awsEndpoint } from "./aws-endpoint";
import { credentialsOf, signRequest } from "./aws-sigv4";

/**
 * SSM `GetParameters` (decrypted) over one SigV4-signed fetch, with the function's own credentials from the
 * environment Lambda gives it. A cold start needs nothing else from SSM, and the SDK client would add 80 KB to
 * every bundle. `AWS_ENDPOINT_URL_SSM` overrides the endpoint, as it does for the SDK.
 */
export interface SsmParameters {
  get(names: readonly string[]): Promise<{ found: Map<string, string>; invalid: string[] }>;
}

export const ssmParameters = (
  aws: AwsEnvironment,
  fetchImpl: typeof fetch = fetch,
  now: () => Date = () => new Date(),
): SsmParameters => ({
  async get(names) {
    const region = aws.region;
    const url = new URL("/", awsEndpoint(aws, "SSM", `https://ssm.${region}.amazonaws.com`).url);
    const body = JSON.stringify({ Names: names, WithDecryption: true });
    const request = { method: "POST", url, headers: { "content-type": "application/x-amz-json-1.1", "x-amz-target": "AmazonSSM.GetParameters" }, body };
    const headers = signRequest(request, { service: "ssm", region }, credentialsOf(aws, "read SSM parameters"), now());
    const res = await fetchImpl(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(5_000) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`SSM GetParameters answered ${res.status}: ${text.slice(0, 200)}`);
    const out = JSON.parse(text) as { Parameters?: { Name?: string; Value?: string }[]; InvalidParameters?: string[] };
    const found = new Map<string, string>();
    for (const p of out.Parameters ?? []) if (p.Name && p.Value !== undefined) found.set(p.Name, p.Value);
    return { found, invalid: out.InvalidParameters ?? [] };
  },
});
