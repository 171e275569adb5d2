/** The deployment's core environment variables: the README table and the startup error hints read from here. */
export interface ConfigVariable {
  name: string;
  required: boolean;
  rule: string;
}

export const configVariables: readonly ConfigVariable[] = [
  {
    name: "DATABASE_URL",
    required: true,
    rule: "pglite://<dir> (pglite://memory in memory), postgres:// or postgresql://, or rds-data://<database>?resourceArn=<url-encoded>&secretArn=<url-encoded>[&region=]",
  },
  { name: "SVC_PUBLIC_BASE_URL", required: true, rule: "Absolute http(s) base URL of the deployment; a trailing slash is dropped" },
  { name: "SVC_PDS_HOST", required: true, rule: "host or host:port that a tenant DID's custody service endpoint must point at" },
  { name: "SVC_PLAYBACK_SIGNING_KEY", required: true, rule: "At least 32 characters; signs playback URLs" },
  { name: "SVC_BLOB_DIR", required: false, rule: "Filesystem blob store directory; this or SVC_BLOB_BUCKET is required" },
  { name: "SVC_BLOB_BUCKET", required: false, rule: "S3 bucket, used when SVC_BLOB_DIR is unset (AWS_REGION, AWS_ENDPOINT_URL_S3 apply)" },
  { name: "SVC_APP_TOKENS", required: false, rule: "Comma-separated appId:token; tokens at least 32 characters; bad entries are dropped with an error log" },
  { name: "SVC_APP_DIDS", required: false, rule: "Comma-separated appId:did (did:web); a tenant in only one of SVC_APP_TOKENS and SVC_APP_DIDS is warned about" },
  { name: "SYSTEM_AUTH_TOKEN", required: false, rule: "At least 32 characters; unset (or too short) makes /api/v1/system/* answer 503" },
  { name: "TRUSTED_PROXY_HOPS", required: false, rule: "Non-negative integer, default 0" },
  { name: "CLIENT_IP_SOURCE", required: false, rule: "forwarded (X-Forwarded-For, default) or edge (address the edge saw)" },
  { name: "LOG_LEVEL", required: false, rule: "debug, info, warn, error or silent; default info in production, debug otherwise" },
  { name: "NODE_ENV", required: false, rule: "production in deploys; default development" },
  { name: "SVC_GIT_SHA", required: false, rule: "Build commit reported by /health" },
  { name: "SVC_DEPLOYED_AT", required: false, rule: "ISO 8601 deploy time reported by /health" },
];

export function describeVariable(name: string): string | undefined {
  return configVariables.find((v) => v.name === name)?.rule;
}
