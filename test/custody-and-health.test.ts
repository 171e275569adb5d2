import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFsBlobStore } from "../core/blobs/fs-blob-store";
import type { SqlBackend } from "../core/sql/port";
import { audioFixture } from "./support/audio-fixtures";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { startTestService, type TestService } from "./support/test-service";

let svc: TestService | undefined;

/** A real database whose queries start failing with `error` once `fail()` is called (after startup migrated it). */
const failingSql = (error: () => Error) => {
  let failing = false;
  return {
    fail: () => void (failing = true),
    open: async (): Promise<SqlBackend> => {
      const sql = await backends[0]!.open();
      return { ...sql, kind: sql.kind, close: () => sql.close(), transaction: (fn) => sql.transaction(fn), query: (t, p) => (failing ? Promise.reject(error()) : sql.query(t, p)) };
    },
  };
};
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

describe("custody and health over the Node host", () => {
  it("the Node host serves /.well-known/did.json for a local tenant whose did:web names its own host, which proves its custody", async () => {
    const localToken = "local-tenant-token-0123456789abcdef0123456789";
    // The test service listens on SVC_PUBLIC_BASE_URL's port; a tenant whose DID names that host is served locally.
    svc = await startTestService({
      driver: "node",
      sql: backends[0]!.open,
      configure: (env, baseUrl) => {
        const host = new URL(baseUrl).host;
        env.SVC_APP_TOKENS += `,local:${localToken}`;
        env.SVC_APP_DIDS += `,local:did:web:${encodeURIComponent(host)}`;
      },
    });
    const host = new URL(svc.baseUrl).host;
    const doc = await fetch(`${svc.baseUrl}/.well-known/did.json`).then((r) => r.json());
    expect(doc).toMatchObject({
      id: `did:web:${encodeURIComponent(host)}`,
      service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: "http://pds.test" }],
    });
    const res = await svc.post("/api/v1/posts", { token: localToken, actor: "me", json: { text: "proven locally" } });
    expect(res.status).toBe(201);
  });

  it("in production the Node host never serves a did.json of its own", async () => {
    svc = await startTestService({
      driver: "node",
      sql: backends[0]!.open,
      env: { NODE_ENV: "production" },
      configure: (env, baseUrl) => {
        env.SVC_APP_TOKENS += ",local:local-tenant-token-0123456789abcdef0123456789";
        env.SVC_APP_DIDS += `,local:did:web:${encodeURIComponent(new URL(baseUrl).host)}`;
      },
    });
    const res = await fetch(`${svc.baseUrl}/.well-known/did.json`);
    expect(res.status).toBe(404);
  });

  it("/health reports records and blobs empty on a fresh service, then present after one post and after one upload", async () => {
    svc = await startTestService({ driver: "node", sql: backends[0]!.open });
    const health = async () => (await svc!.get("/health", { token: null })).json.data;
    expect(await health()).toMatchObject({ records: "empty", blobs: "empty" });
    expect((await svc.post("/api/v1/posts", { actor: "h-1", json: { text: "the first post" } })).status).toBe(201);
    expect(await health()).toMatchObject({ records: "present", blobs: "empty" });
    const { body, contentType } = await multipartBody([{ name: "file", bytes: (await audioFixture("audio/wav")).bytes, type: "audio/wav" }]);
    expect((await svc.post("/api/v1/audio/upload", { actor: "h-1", body, headers: { "content-type": contentType } })).status).toBe(201);
    expect(await health()).toMatchObject({ records: "present", blobs: "present" });
  });

  it("/health never answers 500: an unreachable record store reports records unavailable", async () => {
    const db = failingSql(() => new Error("connection refused"));
    svc = await startTestService({ driver: "node", sql: db.open });
    db.fail();
    const res = await svc.get("/health", { token: null });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ ok: true, records: "unavailable", blobs: "empty" });
  });

  it("/health never answers 500: a blob store that cannot be read reports blobs unavailable", async () => {
    const work = await mkdtemp(path.join(tmpdir(), "health-blobs-"));
    try {
      // SVC_BLOB_DIR naming a file, not a directory: every read of the store fails.
      const notADirectory = path.join(work, "blobs");
      await writeFile(notADirectory, "not a directory");
      svc = await startTestService({ driver: "node", sql: backends[0]!.open, blobs: createFsBlobStore(notADirectory) });
      const res = await svc.get("/health", { token: null });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ success: true, data: { ok: true, records: "empty", blobs: "unavailable" } });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it("a record store that cannot be reached answers 503 SERVICE_UNAVAILABLE", async () => {
    const db = failingSql(() => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    svc = await startTestService({ driver: "node", sql: db.open });
    db.fail();
    const res = await svc.post("/api/v1/posts", { actor: "x", json: { text: "t" } });
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe("SERVICE_UNAVAILABLE");
  });

  it("an unexpected failure answers 500 INTERNAL with the envelope and no stack trace", async () => {
    const db = failingSql(() => new Error("boom at secret/path.ts:12"));
    svc = await startTestService({ driver: "node", sql: db.open });
    db.fail();
    const res = await svc.get("/api/v1/posts", { actor: "x" });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ success: false, error: { code: "INTERNAL", message: "internal error" }, requestId: res.headers["x-request-id"] });
  });
});
