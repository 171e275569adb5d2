import { describe, expect, it } from "vitest";
import { requiredEnv as base } from "../../test/support/config-env";
import { ConfigError, parseConfig } from "./parse-config";
import { checkCustodyDocument } from "../tenancy/custody-document";

const tokenA = "token-for-tenant-a-000000000000000000000";
const tokenB = "token-for-tenant-b-000000000000000000000";
const pdsService = (serviceEndpoint: string) => ({ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint });

function recordingLog() {
  const errors: string[] = [];
  const warnings: string[] = [];
  return {
    errors,
    warnings,
    log: { error: (msg: string) => void errors.push(msg), warn: (msg: string) => void warnings.push(msg) },
  };
}
function parse(extra: Record<string, string | undefined> = {}) {
  const rec = recordingLog();
  return { ...rec, config: parseConfig({ ...base, ...extra }, rec.log) };
}
function fatal(extra: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig({ ...base, ...extra }, recordingLog().log);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("DATABASE_URL picks the SQL backend by scheme", () => {
  it("pglite://memory is in memory and a relative pglite directory stays relative", () => {
    expect(parse().config.database).toEqual({ kind: "pglite", dir: "memory" });
    expect(parse({ DATABASE_URL: "pglite://.data/pg" }).config.database).toEqual({ kind: "pglite", dir: ".data/pg" });
    expect(parse({ DATABASE_URL: "pglite:///var/lib/pg" }).config.database).toEqual({ kind: "pglite", dir: "/var/lib/pg" });
  });

  it("postgres:// and postgresql:// keep the whole URL", () => {
    for (const url of ["postgres://postgres@127.0.0.1:5432/test", "postgresql://u:p@db/x?sslmode=require"]) {
      expect(parse({ DATABASE_URL: url }).config.database).toEqual({ kind: "postgres", url });
    }
  });

  it("rds-data:// carries the database and the url-encoded ARNs", () => {
    const resourceArn = "arn:aws:rds:eu-west-1:123456789012:cluster:svc";
    const secretArn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc-AbCd";
    const url = `rds-data://svc_db?resourceArn=${encodeURIComponent(resourceArn)}&secretArn=${encodeURIComponent(secretArn)}`;
    expect(parse({ DATABASE_URL: url }).config.database).toEqual({ kind: "rds-data", database: "svc_db", resourceArn, secretArn });
    expect(parse({ DATABASE_URL: `${url}&region=eu-west-1` }).config.database).toMatchObject({ region: "eu-west-1" });
  });

  it("rds-data:// whose database name is not percent-encoded correctly is a configuration error naming the variable, not a crash", () => {
    expect(fatal({ DATABASE_URL: "rds-data://svc%zz?resourceArn=a&secretArn=b" }).message).toContain("DATABASE_URL");
  });

  it("rds-data:// without resourceArn or secretArn is fatal", () => {
    expect(fatal({ DATABASE_URL: "rds-data://db?secretArn=s" }).message).toContain("DATABASE_URL");
    expect(fatal({ DATABASE_URL: "rds-data://db?resourceArn=r" }).message).toContain("DATABASE_URL");
  });

  it("any other scheme is fatal and the message never echoes the URL", () => {
    const err = fatal({ DATABASE_URL: "mysql://root:hunter2@db/x" });
    expect(err.message).toContain("DATABASE_URL");
    expect(err.message).not.toContain("hunter2");
  });
});

describe("blob store", () => {
  it("SVC_BLOB_DIR selects the filesystem store even when a bucket is named", () => {
    const { config } = parse({ SVC_BLOB_BUCKET: "svc-blobs" });
    expect(config.blobs).toEqual({ kind: "fs", dir: "/tmp/blobs" });
  });

  it("SVC_BLOB_BUCKET alone selects S3", () => {
    const { config } = parse({ SVC_BLOB_DIR: undefined, SVC_BLOB_BUCKET: "svc-blobs" });
    expect(config.blobs).toEqual({ kind: "s3", bucket: "svc-blobs" });
  });
});

describe("defaults and optional settings", () => {
  it("defaults: development, debug logs, no proxy hops, forwarded client IP, no build identity", () => {
    const { config } = parse();
    expect(config).toMatchObject({
      nodeEnv: "development",
      production: false,
      logLevel: "debug",
      trustedProxyHops: 0,
      clientIpSource: "forwarded",
      sha: null,
      deployedAt: null,
    });
    expect(config.systemAuthToken).toBeUndefined();
    expect("blobBucket" in config).toBe(false);
    expect(config.tenants.size).toBe(0);
  });

  it("LOG_LEVEL defaults to info in production", () => {
    expect(parse({ NODE_ENV: "production" }).config).toMatchObject({ production: true, logLevel: "info" });
    expect(parse({ NODE_ENV: "production", LOG_LEVEL: "silent" }).config.logLevel).toBe("silent");
  });

  it("SVC_PUBLIC_BASE_URL loses its trailing slash", () => {
    expect(parse({ SVC_PUBLIC_BASE_URL: "https://audio.example.com/" }).config.publicBaseUrl).toBe("https://audio.example.com");
    expect(parse({ SVC_PUBLIC_BASE_URL: "http://localhost:3000/svc/" }).config.publicBaseUrl).toBe("http://localhost:3000/svc");
  });

  it("an ELEVENLABS_BASE_URL that is not an absolute http(s) URL, or carries credentials, a query or a fragment, stops start naming the variable, never echoing the value", () => {
    for (const value of ["api.elevenlabs.io", "https://user:hunter2@api.elevenlabs.io", "ftp://x.example", "https://proxy.example/?x=1", "https://proxy.example/#f", "https://proxy.example/?"]) {
      const err = fatal({ ELEVENLABS_API_KEY: "xi-key", ELEVENLABS_BASE_URL: value });
      expect(err.problems.map((p) => p.variable), value).toEqual(["ELEVENLABS_BASE_URL"]);
      expect(err.message).not.toContain(value);
      expect(err.message).not.toContain("hunter2");
    }
    expect(parse({ ELEVENLABS_BASE_URL: "https://proxy.example/elevenlabs//" }).config.processing.elevenLabsBaseUrl).toBe("https://proxy.example/elevenlabs");
    expect(parse({ ELEVENLABS_BASE_URL: "http://127.0.0.1:8080/" }).config.processing.elevenLabsBaseUrl).toBe("http://127.0.0.1:8080");
    expect(parse().config.processing.elevenLabsBaseUrl).toBe("https://api.elevenlabs.io");
  });

  it("SVC_PDS_HOST is canonical as custody compares endpoint hosts: lowercase, an IDN in punycode, a written port kept", () => {
    const pdsHost = (value: string) => parse({ SVC_PDS_HOST: value }).config.pdsHost;
    expect(pdsHost("Bücher.Example")).toBe("xn--bcher-kva.example");
    expect(pdsHost("bücher.example:8443")).toBe("xn--bcher-kva.example:8443");
    expect(pdsHost("PDS.example.com")).toBe("pds.example.com");
    expect(pdsHost("pds.example.com:80")).toBe("pds.example.com:80");
    expect(pdsHost("[::1]:3000")).toBe("[::1]:3000");
    expect(checkCustodyDocument("did:web:t.example", { id: "did:web:t.example", service: [pdsService("https://bücher.example")] }, pdsHost("Bücher.example")!)).toEqual({ ok: true });
  });

  it("build identity comes from SVC_GIT_SHA and SVC_DEPLOYED_AT", () => {
    const { config } = parse({ SVC_GIT_SHA: "abc123", SVC_DEPLOYED_AT: "2025-01-02T03:04:05Z" });
    expect(config.sha).toBe("abc123");
    expect(config.deployedAt).toBe("2025-01-02T03:04:05.000Z");
  });

  it("a SVC_DEPLOYED_AT that is not a time is logged and reported as null, not fatal", () => {
    const { config, errors } = parse({ SVC_DEPLOYED_AT: "yesterday" });
    expect(config.deployedAt).toBeNull();
    expect(errors.join()).toContain("SVC_DEPLOYED_AT");
  });

  it("TRUSTED_PROXY_HOPS and CLIENT_IP_SOURCE are read", () => {
    expect(parse({ TRUSTED_PROXY_HOPS: "2", CLIENT_IP_SOURCE: "edge" }).config).toMatchObject({
      trustedProxyHops: 2,
      clientIpSource: "edge",
    });
  });

  it("a SYSTEM_AUTH_TOKEN shorter than 32 characters is treated as unset with an error log", () => {
    const short = "short-system-token";
    const { config, errors } = parse({ SYSTEM_AUTH_TOKEN: short });
    expect(config.systemAuthToken).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("SYSTEM_AUTH_TOKEN");
    expect(errors[0]).not.toContain(short);
    expect(parse({ SYSTEM_AUTH_TOKEN: "s".repeat(32) }).config.systemAuthToken).toBe("s".repeat(32));
  });

  it("a secret's 32 characters are counted as characters, not UTF-16 units: 16 emoji (32 units) are too short", () => {
    const emoji = "\u{1F511}".repeat(16);
    expect(emoji.length).toBe(32);
    expect(parse({ SYSTEM_AUTH_TOKEN: emoji }).config.systemAuthToken).toBeUndefined();
    expect(parse({ SYSTEM_AUTH_TOKEN: "\u{1F511}".repeat(32) }).config.systemAuthToken).toBe("\u{1F511}".repeat(32));
    const hooks = (secret: string) =>
      parse({ SVC_APP_TOKENS: `a:${tokenA}`, SVC_APP_WEBHOOK_URLS: "a:https://hooks.example.com/x", SVC_APP_WEBHOOK_SECRETS: `a:${secret}` }).config.processing.webhooks.get("a");
    expect(hooks(emoji)).toBeUndefined();
    expect(hooks("\u{1F511}".repeat(32))).toBeDefined();
  });

  it("every fatal problem is reported at once", () => {
    const err = fatal({ DATABASE_URL: undefined, LOG_LEVEL: "loud" });
    expect(err.problems.map((p) => p.variable).sort()).toEqual(["DATABASE_URL", "LOG_LEVEL"]);
  });
});

describe("tenants", () => {
  it("a tenant in both lists gets its token and did:web DID", () => {
    const { config, warnings, errors } = parse({
      SVC_APP_TOKENS: `a:${tokenA},b:${tokenB}`,
      SVC_APP_DIDS: "a:did:web:a.example.com,b:did:web:localhost%3A3000",
    });
    expect(config.tenants.get("a")).toEqual({ appId: "a", token: tokenA, did: "did:web:a.example.com" });
    expect(config.tenants.get("b")).toEqual({ appId: "b", token: tokenB, did: "did:web:localhost%3A3000" });
    expect(warnings).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("a token under 32 characters is dropped with an error naming the tenant, not the token", () => {
    const short = "only-twenty-chars-xx";
    const { config, errors } = parse({ SVC_APP_TOKENS: `weak:${short},a:${tokenA}`, SVC_APP_DIDS: "a:did:web:a.example.com" });
    expect(config.tenants.has("weak")).toBe(false);
    expect(config.tenants.get("a")?.token).toBe(tokenA);
    expect(errors.some((e) => e.includes('"weak"') && e.includes("SVC_APP_TOKENS"))).toBe(true);
    expect(errors.join()).not.toContain(short);
  });

  it("a token no Authorization header can carry (a space, a non-ASCII character) is dropped with an error naming the tenant", () => {
    for (const bad of [`${"x".repeat(20)} ${"y".repeat(20)}`, `${"é".repeat(40)}`]) {
      const { config, errors } = parse({ SVC_APP_TOKENS: `odd:${bad},a:${tokenA}`, SVC_APP_DIDS: "a:did:web:a.example.com" });
      expect(config.tenants.has("odd")).toBe(false);
      expect(errors.some((e) => e.includes('"odd"') && e.includes("SVC_APP_TOKENS"))).toBe(true);
      expect(errors.join()).not.toContain(bad);
    }
  });

  it("a DID that is not a valid did:web DID is dropped with an error and the other entries survive", () => {
    const { config, errors } = parse({
      SVC_APP_DIDS: "plc:did:plc:abcdefghijklmnop,bad:did:web:exa mple.com,path:did:web:example.com%2Fx,a:did:web:a.example.com",
    });
    expect([...config.tenants.keys()]).toEqual(["a"]);
    expect(errors).toHaveLength(3);
    for (const tenant of ["plc", "bad", "path"]) expect(errors.some((e) => e.includes(`"${tenant}"`) && e.includes("SVC_APP_DIDS"))).toBe(true);
  });

  it("two tenants with the same token: the later one loses it with an error", () => {
    const { config, errors } = parse({ SVC_APP_TOKENS: `a:${tokenA},b:${tokenA}` });
    expect(config.tenants.get("a")?.token).toBe(tokenA);
    expect(config.tenants.has("b")).toBe(false);
    expect(errors.some((e) => e.includes('"b"') && !e.includes(tokenA))).toBe(true);
  });

  it("two tenants with the same DID (the same did:web document): the later one loses it with an error naming both, and the first keeps it", () => {
    for (const later of ["did:web:shared.example.com", "did:web:Shared.Example.com"]) {
      const { config, errors } = parse({ SVC_APP_TOKENS: `a:${tokenA},c:${tokenB}`, SVC_APP_DIDS: `a:did:web:shared.example.com,c:${later}` });
      expect(config.tenants.get("a")).toEqual({ appId: "a", token: tokenA, did: "did:web:shared.example.com" });
      expect(config.tenants.get("c")?.did, later).toBeUndefined();
      expect(errors).toEqual([expect.stringMatching(/^SVC_APP_DIDS: .*"c".*"a"/)]);
      expect(errors.join()).not.toContain(tokenB);
    }
  });

  it("a tenant token equal to SYSTEM_AUTH_TOKEN or RENDITION_SERVICE_TOKEN stops start naming the variable and the tenant, never the value", () => {
    for (const variable of ["SYSTEM_AUTH_TOKEN", "RENDITION_SERVICE_TOKEN"]) {
      const err = fatal({ SVC_APP_TOKENS: `a:${tokenA},b:${tokenB}`, SVC_APP_DIDS: "a:did:web:a.example.com,b:did:web:b.example.com", [variable]: tokenB });
      expect(err.problems.map((p) => p.variable)).toEqual([variable]);
      expect(err.message).toContain('"b"');
      expect(err.message).not.toContain(tokenB);
    }
    const distinct = parse({ SVC_APP_TOKENS: `a:${tokenA}`, SYSTEM_AUTH_TOKEN: tokenB, RENDITION_SERVICE_TOKEN: tokenB });
    expect(distinct.config.systemAuthToken).toBe(tokenB);
  });

  it("a tenant in only one of SVC_APP_TOKENS and SVC_APP_DIDS is drift: a warning names it", () => {
    const { config, warnings } = parse({
      SVC_APP_TOKENS: `tokenOnly:${tokenA}`,
      SVC_APP_DIDS: "didOnly:did:web:d.example.com",
    });
    expect(config.tenants.get("tokenOnly")).toEqual({ appId: "tokenOnly", token: tokenA });
    expect(config.tenants.get("didOnly")).toEqual({ appId: "didOnly", did: "did:web:d.example.com" });
    expect(warnings).toHaveLength(2);
    expect(warnings.some((w) => w.includes('"tokenOnly"'))).toBe(true);
    expect(warnings.some((w) => w.includes('"didOnly"'))).toBe(true);
    expect(warnings.join()).not.toContain(tokenA);
  });

  it("a per-tenant entry (pin, model, webhook) whose appId is no tenant in SVC_APP_TOKENS would be unused: a warning names the variable and the appId", () => {
    const tenants = { SVC_APP_TOKENS: `alpha:${tokenA}`, SVC_APP_DIDS: "alpha:did:web:a.example.com" };
    const typo = "Alpha";
    const { warnings } = parse({
      ...tenants,
      SVC_APP_TRANSCRIBERS: `alpha:stub,${typo}:stub`,
      SVC_APP_WAVEFORMS: `${typo}:stub`,
      SVC_APP_STT_MODELS: `${typo}:scribe_v1`,
      SVC_APP_WEBHOOK_URLS: `alpha:https://a.example.com/hook,${typo}:https://a.example.com/hook`,
      SVC_APP_WEBHOOK_SECRETS: `alpha:${"s".repeat(32)},${typo}:${"s".repeat(32)}`,
    });
    for (const variable of ["SVC_APP_TRANSCRIBERS", "SVC_APP_WAVEFORMS", "SVC_APP_STT_MODELS", "SVC_APP_WEBHOOK_URLS"]) {
      expect(warnings.filter((w) => w.includes(variable) && w.includes(`"${typo}"`)), variable).toHaveLength(1);
    }
    expect(warnings).toHaveLength(4);
    expect(warnings.join()).not.toContain('"alpha"');
    // A function that reads no tokens (the stage worker's) has nothing to compare with, and says nothing.
    expect(parse({ SVC_APP_TRANSCRIBERS: `${typo}:stub` }).warnings).toEqual([]);
  });
});
