import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stubWaveform } from "../core/providers/stub-providers";
import { freshDatabase } from "./support/databases";
import { hostProcesses, type HostProcess } from "./support/host-process";
import { multipartBody } from "./support/multipart-body";
import { noiseWav } from "./support/seeded-audio";

/**
 * The host's database, which outlives it: a PGlite directory the host opens itself (PGlite's own crash recovery
 * included), and Postgres when there is one.
 */
const databases = [
  {
    name: "pglite",
    open: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), "svc-crash-pg-"));
      return { url: `pglite://${dir}`, close: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  ...(process.env.TEST_DATABASE_URL
    ? [{ name: "postgres", open: async () => { const db = await freshDatabase("postgres"); return { url: db.url!, close: () => db.close() }; } }]
    : []),
];

/** A rendition service whose waveform calls the test holds open (the passes stay in the middle) or answers. */
const startRenditionService = async () => {
  const held: ServerResponse[] = [];
  let holding = true;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.url !== "/v1/waveform") return void res.writeHead(404).end();
      if (holding) return void held.push(res);
      const { appId, cid, mimeType } = JSON.parse(body) as { appId: string; cid: string; mimeType: string };
      const waveform = stubWaveform({ appId, cid, mimeType: mimeType as "audio/wav", size: 1, durationMs: 500 });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ success: true, data: waveform }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    answer: () => void (holding = false),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
};

const passes = 12;
const author = "crash-author";
const leaseMs = 3_000;
const sweepMs = 500;

describe.each(databases)("recovery after kill -9 of the host in the middle of its passes (real host processes) on $name", (database) => {
  let db: Awaited<ReturnType<(typeof databases)[number]["open"]>>;
  let rendition: Awaited<ReturnType<typeof startRenditionService>>;
  let hosts: Awaited<ReturnType<typeof hostProcesses>>;
  let blobDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await database.open();
    rendition = await startRenditionService();
    hosts = await hostProcesses();
    blobDir = await mkdtemp(path.join(tmpdir(), "svc-crash-"));
    env = {
      DATABASE_URL: db.url,
      SVC_BLOB_DIR: blobDir,
      SVC_PROCESSING_INLINE: "true",
      // local.env's stub switch is off (empty counts as unset): waveform runs on the rendition service above.
      SVC_PROCESSING_STUB: "",
      SVC_TRANSCRIBER: "stub",
      SVC_RENDITION_SERVICE_URL: rendition.url,
      SYSTEM_AUTH_TOKEN: "crash-recovery-system-token-0123456789",
      SVC_LEASE_MS: String(leaseMs),
      SVC_LEASE_HEARTBEAT_MS: String(leaseMs / 6),
      SVC_SWEEP_INTERVAL_MS: String(sweepMs),
      // One author for every post, so one list read shows them all (read through the API: the host owns the database).
      SVC_LIMIT_WRITES_PER_ACTOR: "100/15m",
      SVC_LIMIT_READS_PER_ACTOR: "10000/1m",
      SVC_LIMIT_READS_PER_IP: "10000/1m",
    };
  }, 60_000);
  afterAll(async () => {
    await hosts?.close();
    await rendition?.close();
    await db?.close();
    if (blobDir) await rm(blobDir, { recursive: true, force: true });
  });

  /** Every stage of the author's posts, from the list (newest first): `postId stage status updatedAt`. */
  const stagesOn = async (host: HostProcess) => {
    const res = await host.fetch("/api/v1/posts?limit=100", { actor: author });
    expect(res.status).toBe(200);
    const posts = (await res.json()).data.items as { postId: string; processing?: Record<string, { status: string; updatedAt: string; reason?: string }> }[];
    return posts.flatMap((post) =>
      Object.entries(post.processing ?? {}).sort().map(([stage, s]) => ({ postId: post.postId, stage, status: s.status, reason: s.reason, updatedAt: s.updatedAt })),
    );
  };

  it(`every stage settles within the lease and a few sweeps of a restart (at the defaults, 60 s and 30 s: within 2 minutes), and finished stages are kept`, async () => {
    let host: HostProcess = await hosts.start(env);
    const { body, contentType } = await multipartBody([{ name: "file", bytes: noiseWav(), type: "audio/wav", filename: "clip.wav" }]);
    const uploaded = await host.fetch("/api/v1/audio/upload", { method: "POST", actor: author, headers: { "content-type": contentType }, body });
    expect(uploaded.status).toBe(201);
    const blob = (await uploaded.json()).data.blob;
    // Inline dispatch: each create runs its pass before it answers, so these stay open until the host dies.
    const creates = Array.from({ length: passes }, (_, i) =>
      host
        .fetch("/api/v1/posts", {
          method: "POST",
          actor: author,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text: `pass ${i}`, embed: { $type: "dev.svc.embed.audio", audio: blob }, processing: { transcribe: true, waveform: true } }),
        })
        .then((r) => r.status, () => "gone"),
    );
    // Every pass has settled transcribe and waits on its waveform: the host dies in the middle of all twelve.
    await expect.poll(() => rendition.held.length, { timeout: 30_000 }).toBe(passes);
    const before = await stagesOn(host);
    expect(before.filter((s) => s.stage === "transcribe").map((s) => s.status)).toEqual(Array(passes).fill("ready"));
    expect(before.filter((s) => s.stage === "waveform").map((s) => s.status)).toEqual(Array(passes).fill("pending"));
    await host.kill9();
    expect(await Promise.all(creates)).toEqual(Array(passes).fill("gone"));

    rendition.answer();
    host = await hosts.start(env);
    const restarted = Date.now();
    await expect.poll(async () => (await stagesOn(host)).filter((s) => s.status === "pending").length, { timeout: 60_000, interval: 100 }).toBe(0);
    const took = Date.now() - restarted;
    const after = await stagesOn(host);
    expect(after.map((s) => `${s.stage}:${s.status}`)).toEqual(before.map((s) => `${s.stage}:ready`));
    // Finished work was kept, not run again.
    expect(after.filter((s) => s.stage === "transcribe").map((s) => s.updatedAt)).toEqual(before.filter((s) => s.stage === "transcribe").map((s) => s.updatedAt));
    // The lease lapses within leaseMs of the kill and the next sweep dispatches the stage again.
    expect(took).toBeLessThan(leaseMs + 4 * sweepMs + 5_000);
    console.log(`crash recovery: ${passes} passes killed mid-waveform, every stage settled ${took} ms after the restart (lease ${leaseMs} ms, sweep ${sweepMs} ms)`);
    await host.stop();
  }, 120_000);
});
