import { createHash, createHmac } from "node:crypto";

/**
 * SSM `GetParameters` (decrypted) over one SigV4-signed fetch, with the function's own credentials from the
 * environment Lambda gives it. A cold start needs nothing else from SSM, and the SDK client would add 80 KB to
 * every bundle. `AWS_ENDPOINT_URL_SSM` overrides the endpoint, as it does for the SDK.
 */
export interface SsmParameters {
  get(names: readonly string[]): Promise<{ found: Map<string, string>; invalid: string[] }>;
}

export const ssmParameters = (
  env: NodeJS.ProcessEnv = process.env,
  fetchImpl: typeof fetch = fetch,
  now: () => Date = () => new Date(),
): SsmParameters => ({
  async get(names) {
    const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
    const endpoint = new URL(env.AWS_ENDPOINT_URL_SSM ?? env.AWS_ENDPOINT_URL ?? `https://ssm.${region}.amazonaws.com`);
    const body = JSON.stringify({ Names: names, WithDecryption: true });
    const headers = signedHeaders(env, region, endpoint.host, body, now());
    const res = await fetchImpl(new URL("/", endpoint), { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(5_000) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`SSM GetParameters answered ${res.status}: ${text.slice(0, 200)}`);
    const out = JSON.parse(text) as { Parameters?: { Name?: string; Value?: string }[]; InvalidParameters?: string[] };
    const found = new Map<string, string>();
    for (const p of out.Parameters ?? []) if (p.Name && p.Value !== undefined) found.set(p.Name, p.Value);
    return { found, invalid: out.InvalidParameters ?? [] };
  },
});

const sha256 = (data: string) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** Signature Version 4 for a JSON 1.1 POST to `/` (docs.aws.amazon.com, "Create a signed AWS API request"). */
export const signedHeaders = (env: NodeJS.ProcessEnv, region: string, host: string, body: string, at: Date): Record<string, string> => {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new Error("No AWS credentials in the environment to read SSM parameters");
  const amzDate = at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    "content-type": "application/x-amz-json-1.1",
    host,
    "x-amz-date": amzDate,
    ...(env.AWS_SESSION_TOKEN && { "x-amz-security-token": env.AWS_SESSION_TOKEN }),
    "x-amz-target": "AmazonSSM.GetParameters",
  };
  const names = Object.keys(headers).sort();
  const signed = names.join(";");
  const canonical = ["POST", "/", "", ...names.map((n) => `${n}:${headers[n]!.trim()}`), "", signed, sha256(body)].join("\n");
  const scope = `${date}/${region}/ssm/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), "ssm"), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  const { host: _host, ...sent } = headers;
  return { ...sent, authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}` };
};
