/** Ingestion throughput on 25 MiB against the floor: node:crypto SHA-256 over the same bytes. */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { bench, describe } from "vitest";
import { pcmWav } from "../../test/support/audio-fixtures";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import type { Sql } from "../sql/port";
import { maxUploadBytes } from "../records/accepted-types";
import { ingestAudio } from "./ingest-audio";
import { scanAudio } from "./scan-audio";

const bytes = pcmWav(maxUploadBytes);
// Varying the first sample keeps every run a new CID, so each one pays for a real write and rename.
let run = 0;
const chunked = () => {
  const copy = Buffer.from(bytes);
  copy.writeUInt32LE(++run, 44);
  let at = 0;
  return new Readable({
    read() {
      if (at >= copy.length) this.push(null);
      else this.push(copy.subarray(at, (at += 64 * 1024)));
    },
  });
};
const noSql: Sql = { query: async () => [], transaction: (fn) => fn(noSql) };
const dir = mkdtempSync(join(tmpdir(), "ingest-bench-"));
const store = createFsBlobStore(dir);


describe("25 MiB upload", () => {
  bench("node:crypto sha256 of the bytes (floor)", () => {
    createHash("sha256").update(bytes).digest();
  });

  bench("scanAudio: count, hash, sniff, measure (no store)", async () => {
    await scanAudio({ source: chunked(), mimeType: "audio/wav" });
  });

  bench(
    "ingestAudio into the filesystem store (stage, fsync, rename)",
    async () => {
      const { key } = await ingestAudio({ store, sql: noSql, appId: "bench", mimeType: "audio/wav", source: chunked() });
      await store.delete(key);
    },
    { teardown: () => rmSync(dir, { recursive: true, force: true }) },
  );
});
