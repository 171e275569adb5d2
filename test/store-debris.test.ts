import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawCid } from "../core/blobs/raw-cid";
import { pcmWav } from "./support/audio-fixtures";
import { freshDatabase, type TestDatabase } from "./support/databases";
import { hostProcesses, hostToken } from "./support/host-process";
import { multipartBody } from "./support/multipart-body";

/** A WAV of `bytes` bytes whose samples differ by `seed`, so each has a CID of its own. */
const wavOf = (bytes: number, seed: number) => {
  const wav = pcmWav(bytes);
  wav.writeUInt16LE(seed, 44);
  return wav;
};

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);

/** kill -9 of a real host in the middle of an upload, then a restart on the same database and blob directory. */
describe("what a crash leaves in the blob store is removed at the next start (a real host process)", () => {
  let db: TestDatabase | undefined;
  let databaseUrl: string;
  let work: string;
  let hosts: Awaited<ReturnType<typeof hostProcesses>>;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), "svc-debris-"));
    if (process.env.TEST_DATABASE_URL) {
      db = await freshDatabase("postgres");
      databaseUrl = db.url!;
    } else {
      databaseUrl = `pglite://${path.join(work, "pg")}`;
    }
    hosts = await hostProcesses();
  }, 60_000);
  afterAll(async () => {
    await hosts?.close();
    await db?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("staging files no upload writes any more, and stored objects no row references once an hour old, are removed at start; referenced and younger ones stay", async () => {
    const blobDir = path.join(work, "blobs");
    const env = { DATABASE_URL: databaseUrl, SVC_BLOB_DIR: blobDir };
    const first = await hosts.start(env);

    // A stored upload (its row references it) and its rendition.
    const kept = wavOf(16_000, 1);
    const form = await multipartBody([{ name: "file", bytes: kept, type: "audio/wav", filename: "a.wav" }]);
    const stored = await first.fetch("/api/v1/audio/upload", { method: "POST", actor: "keeper", headers: { "content-type": form.contentType }, body: new Uint8Array(form.body) });
    expect(stored.status).toBe(201);
    const keptCid = rawCid(kept);
    const at = (key: string) => path.join(blobDir, ...key.split("/"));
    await mkdir(at("renditions/host"), { recursive: true });
    await writeFile(at(`renditions/host/${keptCid}.mp3`), "mp3 of the kept upload");

    // An upload under way when the host is killed: its staging file stays behind.
    const socket = connect(Number(new URL(first.url).port), "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const boundary = "crash";
    socket.write(
      `POST /api/v1/audio/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${hostToken}\r\nX-Svc-Acting-Actor: crasher\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 400000\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    );
    socket.write(wavOf(200_000, 2).subarray(0, 128 * 1024));
    const staging = () => readdir(at("staging")).catch(() => [] as string[]);
    await expect.poll(async () => (await staging()).length, { timeout: 5_000 }).toBe(1);

    // Objects placed by uploads killed before their rows were inserted: one an hour and more old, one just now.
    const orphan = wavOf(16_000, 3);
    const orphanCid = rawCid(orphan);
    const young = wavOf(16_000, 4);
    const youngCid = rawCid(young);
    await writeFile(at(`blobs/host/${orphanCid}`), orphan);
    await writeFile(at(`renditions/host/${orphanCid}.mp3`), "mp3 of the orphan");
    await writeFile(at(`blobs/host/${youngCid}`), young);

    await first.kill9();
    socket.destroy();

    // As if the crash had been two hours ago: every file is old, the young orphan aside.
    for (const key of [`blobs/host/${keptCid}`, `renditions/host/${keptCid}.mp3`, `blobs/host/${orphanCid}`, `renditions/host/${orphanCid}.mp3`]) {
      await utimes(at(key), hoursAgo(2), hoursAgo(2));
    }
    for (const name of await staging()) await utimes(at(`staging/${name}`), hoursAgo(2), hoursAgo(2));

    const second = await hosts.start(env);
    const swept = await second.waitForLine((line) => line.message === "invocation" && line.invocation === "store-janitor");
    expect(swept).toMatchObject({ stagingRemoved: 1, orphansRemoved: 2 });
    expect(await staging()).toEqual([]);
    expect((await readdir(at("blobs/host"))).sort()).toEqual([keptCid, youngCid].sort());
    expect(await readdir(at("renditions/host"))).toEqual([`${keptCid}.mp3`]);
    expect(await readFile(at(`blobs/host/${keptCid}`))).toEqual(kept);
    await second.stop();
  }, 120_000);
});
