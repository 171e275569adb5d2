import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { Upload } from "@aws-sdk/lib-storage";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RDSDataClient } from "@aws-sdk/client-rds-data";
import { startDataApiEmulator, type DataApiEmulator } from "../../test/support/data-api-emulator";
import { startS3Emulator, type S3Emulator } from "../../test/support/s3-emulator";
import { openRdsData } from "../sql/rds-data";
import { probeWithin } from "../health/probe-within";
import { signRequest } from "./aws-sigv4";
import { awsEnvironment } from "../config/aws-environment";
import { dataApiRecordsProbe, type DataApiTarget } from "./data-api-records-probe";
import { s3BlobsProbe } from "./s3-blobs-probe";

/** A loopback AWS endpoint: records each request, answers as the test says. */
interface Received {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}
let answer: (req: Received, res: ServerResponse) => void;
const received: Received[] = [];
let server: Server;
let endpoint: string;
/** Where a redirect points: a probe that followed one would show up here. */
let elsewhere: Server;
let elsewhereUrl: string;
const elsewhereHits: string[] = [];

const listen = async (s: Server) => {
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const got = { method: req.method!, url: new URL(req.url!, `http://${req.headers.host}`), headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(got);
      answer(got, res);
    });
  });
  endpoint = await listen(server);
  elsewhere = createServer((req, res) => {
    elsewhereHits.push(req.url!);
    res.writeHead(200).end();
  });
  elsewhereUrl = await listen(elsewhere);
});
afterEach(() => {
  received.length = 0;
  elsewhereHits.length = 0;
});
afterAll(async () => {
  server.closeAllConnections();
  await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => elsewhere.close(r))]);
});

const credentials = { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_SESSION_TOKEN: "role-session-token" };
const at = new Date("2026-11-22T08:00:00Z");
const target: DataApiTarget = {
  resourceArn: "arn:aws:rds:eu-west-1:123456789012:cluster:svc",
  secretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc-abc",
  database: "svc",
  region: "eu-west-1",
};

/** The authorization the request should carry had exactly what arrived been signed: the sent request is the signed one. */
const expectSignedAsReceived = (got: Received, scope: { service: string; region: string }, signed: string[]) => {
  const headers = Object.fromEntries(signed.map((name) => [name, String(got.headers[name])]));
  const expected = signRequest(
    { method: got.method, url: got.url, headers, body: got.body },
    scope,
    { accessKeyId: credentials.AWS_ACCESS_KEY_ID, secretAccessKey: credentials.AWS_SECRET_ACCESS_KEY, sessionToken: credentials.AWS_SESSION_TOKEN },
    at,
  );
  expect(got.headers["x-amz-date"]).toBe("20261122T080000Z");
  expect(got.headers["x-amz-security-token"]).toBe("role-session-token");
  expect(got.headers.authorization).toBe(expected.authorization);
  expect(got.headers.authorization).toContain(`/${scope.region}/${scope.service}/aws4_request`);
};

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_: Received, res: ServerResponse) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

/** What /health reports for a probe, and why when unavailable. */
const reported = async (probe: () => Promise<"empty" | "present">, ms = 1_500) => {
  const reasons: string[] = [];
  const state = await probeWithin(probe(), ms, (reason) => reasons.push(reason.message));
  return { state, reason: reasons[0] };
};

describe("the Data API records probe (one signed ExecuteStatement)", () => {
  const probe = (env: NodeJS.ProcessEnv = { AWS_ENDPOINT_URL_RDS_DATA: endpoint }, timeoutMs?: number) =>
    dataApiRecordsProbe(target, { aws: awsEnvironment({ ...credentials, ...env }), now: () => at, ...(timeoutMs && { timeoutMs }) });

  it("POSTs the posts statement to /Execute as JSON, signed for rds-data in the cluster's region with the session token", async () => {
    answer = json(200, { records: [[{ booleanValue: true }]], numberOfRecordsUpdated: 0 });
    expect(await probe()()).toBe("present");
    const [got] = received as [Received];
    expect(got.method).toBe("POST");
    expect(got.url.pathname).toBe("/Execute");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(got.body)).toEqual({ ...target, region: undefined, sql: "SELECT EXISTS (SELECT 1 FROM posts) AS present" });
    expectSignedAsReceived(got, { service: "rds-data", region: "eu-west-1" }, ["content-type"]);
  });

  it("reports empty when there is no post", async () => {
    answer = json(200, { records: [[{ booleanValue: false }]] });
    expect(await reported(probe())).toEqual({ state: "empty", reason: undefined });
  });

  it("an error status is unavailable, with the error type in the reason", async () => {
    answer = json(400, { message: "Database svc is resuming" }, { "x-amzn-ErrorType": "DatabaseResumingException:http://internal.amazon.com/" });
    expect(await reported(probe())).toEqual({
      state: "unavailable",
      reason: 'Data API ExecuteStatement answered 400 DatabaseResumingException: {"message":"Database svc is resuming"}',
    });
  });

  it("an answer without the boolean is unavailable", async () => {
    answer = json(200, { records: [] });
    expect((await reported(probe())).state).toBe("unavailable");
  });

  it("gives up after its timeout: unavailable", async () => {
    answer = () => {}; // never answers
    const started = performance.now();
    const { state, reason } = await reported(probe(undefined, 200), 5_000);
    expect(state).toBe("unavailable");
    expect(reason).toMatch(/timeout|aborted/i);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("never follows a redirect: unavailable", async () => {
    answer = (_, res) => res.writeHead(307, { location: `${elsewhereUrl}/Execute` }).end();
    expect(await reported(probe())).toMatchObject({ state: "unavailable", reason: expect.stringContaining("answered 307") });
    expect(elsewhereHits).toEqual([]);
  });

  it("missing credentials are unavailable, not a crash", async () => {
    const bare = dataApiRecordsProbe(target, { aws: awsEnvironment({ AWS_ENDPOINT_URL_RDS_DATA: endpoint }) });
    expect(await reported(bare)).toMatchObject({ state: "unavailable", reason: expect.stringContaining("No AWS credentials") });
    expect(received).toEqual([]);
  });

  it("finds its endpoint as the SDK does: AWS_ENDPOINT_URL_RDS_DATA, then AWS_ENDPOINT_URL, then the region's", async () => {
    const urls: string[] = [];
    const fetchImpl = (async (url: URL) => (urls.push(String(url)), new Response(JSON.stringify({ records: [[{ booleanValue: false }]] })))) as unknown as typeof fetch;
    const at = (env: NodeJS.ProcessEnv) => dataApiRecordsProbe(target, { aws: awsEnvironment({ ...credentials, ...env }), fetch: fetchImpl })();
    await at({ AWS_ENDPOINT_URL_RDS_DATA: "http://127.0.0.1:1", AWS_ENDPOINT_URL: "http://127.0.0.1:2" });
    await at({ AWS_ENDPOINT_URL: "http://127.0.0.1:2" });
    await at({ AWS_REGION: "us-west-2" });
    expect(urls).toEqual(["http://127.0.0.1:1/Execute", "http://127.0.0.1:2/Execute", "https://rds-data.eu-west-1.amazonaws.com/Execute"]);
  });
});

describe("the Data API records probe against data-api-local", () => {
  let emulator: DataApiEmulator;
  let client: RDSDataClient;
  beforeAll(async () => {
    emulator = await startDataApiEmulator();
    client = new RDSDataClient({ endpoint: emulator.endpoint, region: "us-east-1", credentials: { accessKeyId: "local", secretAccessKey: "local" } });
  });
  afterAll(async () => {
    client?.destroy();
    await emulator?.stop();
  });

  it("is unavailable before the posts table exists, empty while it has no row, present once it has one", async () => {
    const sql = openRdsData({ ...emulator, client });
    const probe = dataApiRecordsProbe(emulator, { aws: awsEnvironment({ ...credentials, AWS_ENDPOINT_URL_RDS_DATA: emulator.endpoint }) });
    expect((await reported(probe)).state).toBe("unavailable");
    await sql.query("CREATE TABLE posts (id text PRIMARY KEY)");
    expect(await probe()).toBe("empty");
    await sql.query("INSERT INTO posts (id) VALUES ('3jzfcijpj2z2a')");
    expect(await probe()).toBe("present");
  });
});

describe("the S3 blobs probe (one signed one-key ListObjectsV2)", () => {
  const probe = (env: NodeJS.ProcessEnv = { AWS_ENDPOINT_URL_S3: endpoint }, timeoutMs?: number) =>
    s3BlobsProbe("svc-blobs", { aws: awsEnvironment({ ...credentials, AWS_REGION: "eu-west-1", ...env }), now: () => at, ...(timeoutMs && { timeoutMs }) });
  const listing = (count: number) => (_: Received, res: ServerResponse) =>
    res.writeHead(200, { "content-type": "application/xml" }).end(
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>svc-blobs</Name><Prefix>blobs/</Prefix><KeyCount>${count}</KeyCount><MaxKeys>1</MaxKeys></ListBucketResult>`,
    );

  it("GETs at most one key under blobs/ of the bucket, path-style on an endpoint override, signed for s3 with the session token", async () => {
    answer = listing(1);
    expect(await probe()()).toBe("present");
    const [got] = received as [Received];
    expect(got.method).toBe("GET");
    expect(got.url.pathname).toBe("/svc-blobs");
    expect(Object.fromEntries(got.url.searchParams)).toEqual({ "list-type": "2", "max-keys": "1", prefix: "blobs/" });
    expect(got.headers["x-amz-content-sha256"]).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expectSignedAsReceived(got, { service: "s3", region: "eu-west-1" }, ["x-amz-content-sha256"]);
  });

  it("reports empty when no original blob is stored", async () => {
    answer = listing(0);
    expect(await reported(probe())).toEqual({ state: "empty", reason: undefined });
  });

  it("an error status is unavailable", async () => {
    answer = (_, res) => res.writeHead(403).end("<Error><Code>AccessDenied</Code></Error>");
    expect(await reported(probe())).toEqual({ state: "unavailable", reason: "S3 ListObjectsV2 on svc-blobs answered 403: <Error><Code>AccessDenied</Code></Error>" });
  });

  it("gives up after its timeout: unavailable", async () => {
    answer = () => {};
    const started = performance.now();
    expect((await reported(probe(undefined, 200), 5_000)).state).toBe("unavailable");
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("never follows a redirect (a bucket in another region): unavailable", async () => {
    answer = (_, res) => res.writeHead(301, { location: `${elsewhereUrl}/svc-blobs` }).end();
    expect(await reported(probe())).toMatchObject({ state: "unavailable", reason: expect.stringContaining("answered 301") });
    expect(elsewhereHits).toEqual([]);
  });

  it("addresses AWS virtual-hosted style in the function's region, and honours AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL", async () => {
    const urls: string[] = [];
    const fetchImpl = (async (url: URL) => (urls.push(String(url)), new Response("<KeyCount>0</KeyCount>"))) as unknown as typeof fetch;
    const at = (env: NodeJS.ProcessEnv) => s3BlobsProbe("svc-blobs", { aws: awsEnvironment({ ...credentials, ...env }), fetch: fetchImpl })();
    await at({ AWS_REGION: "eu-west-1" });
    await at({ AWS_ENDPOINT_URL_S3: "http://127.0.0.1:1", AWS_ENDPOINT_URL: "http://127.0.0.1:2" });
    await at({ AWS_ENDPOINT_URL: "http://127.0.0.1:2" });
    const query = "?list-type=2&max-keys=1&prefix=blobs%2F";
    expect(urls).toEqual([`https://svc-blobs.s3.eu-west-1.amazonaws.com/${query}`, `http://127.0.0.1:1/svc-blobs${query}`, `http://127.0.0.1:2/svc-blobs${query}`]);
  });

  // s3rver parses the Authorization header and checks its access key (not a V4 signature): the request is one S3 reads.
  describe("against s3rver", () => {
    let s3: S3Emulator;
    beforeAll(async () => {
      s3 = await startS3Emulator("probe-bucket");
    });
    afterAll(async () => {
      await s3?.stop();
    });
    const real = (accessKeyId = "S3RVER") =>
      s3BlobsProbe(s3.bucket, { aws: awsEnvironment({ AWS_ENDPOINT_URL_S3: s3.endpoint, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_SESSION_TOKEN: "t" }) });
    const put = (key: string) => new Upload({ client: s3.client, params: { Bucket: s3.bucket, Key: key, Body: Readable.from([Buffer.from("x")]) } }).done();

    it("is empty until an original blob is stored (renditions and staging do not count), then present", async () => {
      expect(await real()()).toBe("empty");
      await put("renditions/app/x.mp3");
      await put("staging/ingest-1");
      expect(await real()()).toBe("empty");
      await put("blobs/app/bafkreiexample");
      expect(await real()()).toBe("present");
    });

    it("an unknown access key is refused: unavailable", async () => {
      expect(await reported(real("AKIDUNKNOWN"))).toMatchObject({ state: "unavailable", reason: expect.stringContaining("answered 403") });
    });
  });
});
