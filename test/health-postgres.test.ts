/**
 * /health names the backend the service runs on (docs/decisions.md#health-and-reference): `npm start`'s process given a Postgres
 * DATABASE_URL reports `backend: "postgres"`, and its records probe reads that database.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "./support/databases";
import { hostProcesses } from "./support/host-process";

describe.skipIf(!process.env.TEST_DATABASE_URL)("/health of a Node host on Postgres (a real host process)", () => {
  let db: TestDatabase;
  let work: string;
  let hosts: Awaited<ReturnType<typeof hostProcesses>>;

  beforeAll(async () => {
    db = await freshDatabase("postgres");
    work = await mkdtemp(path.join(tmpdir(), "svc-health-pg-"));
    hosts = await hostProcesses();
  }, 60_000);
  afterAll(async () => {
    await hosts?.close();
    await db?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('reports backend "postgres" with records "empty" on a fresh database, then "present" once a post is stored', async () => {
    const host = await hosts.start({ DATABASE_URL: db.url!, SVC_BLOB_DIR: path.join(work, "blobs") });
    const health = async () => (await (await fetch(`${host.url}/health`)).json()).data;
    expect(await health()).toMatchObject({ ok: true, backend: "postgres", records: "empty" });

    const created = await host.fetch("/api/v1/posts", { method: "POST", actor: "health-pg", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "stored" }) });
    expect(created.status).toBe(201);
    expect(await health()).toMatchObject({ ok: true, backend: "postgres", records: "present" });
    // The post is in the database the URL names.
    expect(await db.query("SELECT 1 FROM posts")).toHaveLength(1);
  });
});
