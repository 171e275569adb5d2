import { createHash } from "node:crypto";
import { healthProbeMs } from "../health/probe-within";
import { awsEndpoint } from "./aws-endpoint";
import { credentialsOf, signRequest } from "./aws-sigv4";
import type { SignedProbeOptions } from "./data-api-records-probe";

const emptySha256 = createHash("sha256").digest("hex");

/**
 * Whether any original blob is stored, asked of S3 with one signed `ListObjectsV2` of at most one key under `blobs/`
 * (what the S3 store's own probe asks, under the same `s3:ListBucket`), rather than through the S3 client. AWS is
 * addressed virtual-hosted style; an endpoint override (an emulator) path-style. It throws on anything but a 200
 * listing: an error status, a redirect (a bucket in another region; never followed), a timeout.
 */
export const s3BlobsProbe = (bucket: string, options: SignedProbeOptions) => {
  const { aws } = options;
  const fetchImpl = options.fetch ?? fetch;
  return async (): Promise<"empty" | "present"> => {
    const region = aws.region;
    const endpoint = awsEndpoint(aws, "S3", `https://${bucket}.s3.${region}.amazonaws.com`);
    const url = new URL(endpoint.overridden ? `/${bucket}` : "/", endpoint.url);
    url.search = new URLSearchParams({ "list-type": "2", "max-keys": "1", prefix: "blobs/" }).toString();
    const request = { method: "GET", url, headers: { "x-amz-content-sha256": emptySha256 } };
    const headers = signRequest(request, { service: "s3", region }, credentialsOf(aws, "probe the blob bucket"), (options.now ?? (() => new Date()))());
    const res = await fetchImpl(url, { headers, redirect: "manual", signal: AbortSignal.timeout(options.timeoutMs ?? healthProbeMs) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`S3 ListObjectsV2 on ${bucket} answered ${res.status}: ${text.slice(0, 200)}`);
    const count = /<KeyCount>(\d+)<\/KeyCount>/.exec(text)?.[1];
    if (count === undefined) throw new Error(`S3 ListObjectsV2 on ${bucket} answered no KeyCount: ${text.slice(0, 200)}`);
    return Number(count) > 0 ? "present" : "empty";
  };
};
