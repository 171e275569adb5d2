import { createHash, createHmac } from "node:crypto";
import type { AwsCredentials, AwsEnvironment } from "../config/aws-environment";

/**
 * AWS Signature Version 4 over node:crypto (docs.aws.amazon.com, "Create a signed AWS API request"), for the few
 * calls a function makes without an SDK client: SSM at cold start, the health probes. An SDK client would add tens
 * of kilobytes and most of the import time to each bundle for one request.
 */
export type { AwsCredentials } from "../config/aws-environment";

/** The function's own credentials, from the environment Lambda gives it; `purpose` names the call in the error. */
export const credentialsOf = (environment: AwsEnvironment, purpose: string): AwsCredentials => {
  if (!environment.credentials) throw new Error(`No AWS credentials in the environment to ${purpose}`);
  return environment.credentials;
};

export interface SignableRequest {
  method: string;
  url: URL;
  /** Headers to send, every one of them signed; `host` (from the URL) is signed too and left to fetch to send. */
  headers: Record<string, string>;
  body?: string;
}

/** RFC 3986 unreserved characters stay; everything else is percent-encoded, as SigV4's canonical form requires. */
const uriEncode = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const sha256 = (data: string) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** The signature date format: `20150830T123600Z`. */
export const amzDate = (at: Date): string => at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");

/**
 * The headers to send for `request`: its own, `x-amz-date`, the session token, and `authorization`. S3 signs its
 * path as sent; every other service signs it encoded a second time.
 */
export const signRequest = (
  request: SignableRequest,
  scope: { service: string; region: string },
  credentials: AwsCredentials,
  at: Date,
): Record<string, string> => {
  const date = amzDate(at);
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value])),
    host: request.url.host,
    "x-amz-date": date,
    ...(credentials.sessionToken && { "x-amz-security-token": credentials.sessionToken }),
  };
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(";");
  const segments = request.url.pathname.split("/").map((segment) => uriEncode(decodeURIComponent(segment)));
  const path = (scope.service === "s3" ? segments : segments.map(uriEncode)).join("/") || "/";
  const query = [...request.url.searchParams]
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  const canonical = [
    request.method,
    path,
    query,
    ...names.map((name) => `${name}:${headers[name]!.trim().replace(/\s+/g, " ")}`),
    "",
    signedHeaders,
    headers["x-amz-content-sha256"] ?? sha256(request.body ?? ""),
  ].join("\n");
  const credentialScope = `${date.slice(0, 8)}/${scope.region}/${scope.service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", date, credentialScope, sha256(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date.slice(0, 8)), scope.region), scope.service), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  const { host: _host, ...sent } = headers;
  return {
    ...sent,
    authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
};
