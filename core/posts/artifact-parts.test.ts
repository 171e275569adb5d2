import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import type { Sql } from "../sql/port";
import { partBytes, partsPerRead } from "../sql/json-parts";
import { inlineArtifactBytes } from "./artifact-parts";
import { findPost, listPosts } from "./post-store";

/** A transcript record of about `bytes` bytes of JSON whose text is multi-byte throughout, so parts cut characters. */
const transcriptOf = (bytes: number, word = "語り🎙️ ") => ({
  $type: "dev.svc.audio.transcript",
  text: word.repeat(Math.ceil(bytes / Buffer.byteLength(word))),
  segments: [{ startMs: 0, endMs: 1000, text: "一" }],
});
const waveformOf = (points: number, salt = 0) => ({
  version: 2, channels: 1, sample_rate: 8000, samples_per_pixel: 400, bits: 8, length: points,
  data: Array.from({ length: points * 2 }, (_, i) => ((i * 7919 + salt) % 255) - 127),
});

/** Counts the statements a read runs, and lets a test act between them. */
const counting = (sql: Sql, before?: (text: string, n: number) => Promise<void>) => {
  const counted = {
    statements: 0,
    async query<Row>(text: string, params?: readonly unknown[]) {
      counted.statements++;
      await before?.(text, counted.statements);
      return sql.query<Row>(text, params as never);
    },
    transaction: sql.transaction.bind(sql),
  };
  return counted as Sql & { statements: number };
};

describe.each(backends)("artifacts read in parts on $name", (backend) => {
  let db: TestDatabase;
  let n = 0;
  const appId = "parts";
  const addPost = async (artifacts: { transcript?: object; waveform?: object }) => {
    const rkey = `3lparts${String(++n).padStart(6, "0")}`;
    const record = { $type: "dev.svc.audio.post", text: `post ${n}`, createdAt: new Date(Date.UTC(2026, 10, 1, 0, n)).toISOString() };
    await db.query("INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ($1, $2, $3::json, $4, 'alice')", [appId, rkey, JSON.stringify(record), `bafy${n}`]);
    if (artifacts.waveform) {
      await db.query("INSERT INTO post_enrichment (app_id, rkey, waveform) VALUES ($1, $2, $3::json)", [appId, rkey, JSON.stringify(artifacts.waveform)]);
    }
    if (artifacts.transcript) {
      await db.query("INSERT INTO transcripts (app_id, rkey, record, cid, updated_at) VALUES ($1, $2, $3::json, $4, now())", [
        appId, rkey, JSON.stringify(artifacts.transcript), `bafyt${n}`,
      ]);
    }
    return rkey;
  };

  beforeAll(async () => {
    db = await migratedDatabase(backend);
  });
  afterAll(() => db?.close());

  it("an artifact cut into parts reads back exactly, with multi-byte characters cut at part boundaries", async () => {
    const transcript = transcriptOf(5 * partBytes + 1234);
    const waveform = waveformOf(9_000);
    const rkey = await addPost({ transcript, waveform });
    const sql = counting(db);
    const post = await findPost(sql, appId, rkey);
    expect(post?.transcript).toEqual(transcript);
    expect(post?.waveform).toEqual(waveform);
    expect(post?.record.text).toBe(`post ${n}`);
    expect(sql.statements).toBe(1);
  });

  it("a post without artifacts is one row, and reads as before", async () => {
    const rkey = await addPost({});
    const post = await findPost(db, appId, rkey);
    expect(post).toMatchObject({ rkey, transcript: null, waveform: null, record: { text: `post ${n}` } });
  });

  it("artifacts past the inline budget are read after the post, 16 parts (512 KiB) per statement", async () => {
    const waveform = waveformOf(160_000);
    const bytes = Buffer.byteLength(JSON.stringify(waveform));
    expect(bytes).toBeGreaterThan(inlineArtifactBytes);
    const rkey = await addPost({ waveform, transcript: transcriptOf(1000) });
    const sql = counting(db);
    const post = await findPost(sql, appId, rkey);
    expect(post?.waveform).toEqual(waveform);
    expect(post?.transcript).toEqual(transcriptOf(1000));
    // The post's statement, then one per 16 parts of the waveform (the transcript went with the post's: the budget
    // is for both together, so neither travels inline here and each is read on its own), then the post's stage states
    // again (unchanged: no settle wrote in between).
    expect(sql.statements).toBe(1 + Math.ceil(bytes / partBytes / partsPerRead) + 1 + 1);
  });

  it("a list page carries its posts' artifacts, large ones read after it", async () => {
    const small = waveformOf(2_000, 1);
    const large = waveformOf(120_000, 2);
    const smallKey = await addPost({ waveform: small });
    const largeKey = await addPost({ waveform: large });
    const page = await listPosts(db, appId, { kind: "own", authorId: "alice" }, undefined, 2);
    expect(page.items.map((p) => p.rkey)).toEqual([largeKey, smallKey]);
    expect(page.items[0]!.waveform).toEqual(large);
    expect(page.items[1]!.waveform).toEqual(small);
    expect(page.nextCursor).toBe(smallKey);
  });

  it("an artifact replaced between two of its statements is read again whole, never joined from two versions", async () => {
    const first = waveformOf(160_000, 3);
    const second = waveformOf(160_000, 4);
    expect(JSON.stringify(second).length).toBe(JSON.stringify(first).length);
    const rkey = await addPost({ waveform: first });
    let replaced = false;
    const sql = counting(db, async (text, statement) => {
      // Before the artifact's second statement: a stage rerun replaces it with one of the same length.
      if (statement === 3 && text.includes("md5(") && !replaced) {
        replaced = true;
        await db.query("UPDATE post_enrichment SET waveform = $3::json WHERE app_id = $1 AND rkey = $2", [appId, rkey, JSON.stringify(second)]);
      }
    });
    const post = await findPost(sql, appId, rkey);
    expect(replaced).toBe(true);
    expect(post?.waveform).toEqual(second);
  });

  it.each(["findPost", "listPosts"])("a rerun settled between a post's statement and its large artifact's is never paired with the post's older bytes (%s): the post is read again whole", async (read) => {
    const old = waveformOf(160_000, 5);
    const recomputed = waveformOf(160_000, 6);
    const rkey = await addPost({ waveform: old });
    const at = Date.UTC(2026, 10, 2);
    await db.query("UPDATE post_enrichment SET audio_cid = 'bafkold', audio_mime_type = 'audio/wav', audio_size = 100 WHERE app_id = $1 AND rkey = $2", [appId, rkey]);
    await db.query("INSERT INTO post_stages (app_id, rkey, stage, status, updated_at) VALUES ($1, $2, 'trim', 'ready', $3), ($1, $2, 'waveform', 'ready', $3)", [appId, rkey, new Date(at).toISOString()]);
    let settled = false;
    const sql = counting(db, async (text) => {
      // Once the post's own statement has run, before its waveform's first: a trim rerun's new bytes and their waveform.
      if (text.includes("md5(") && !settled) {
        settled = true;
        await db.transaction(async (tx) => {
          await tx.query("UPDATE post_enrichment SET audio_cid = 'bafknew', audio_size = 90, waveform = $3::json WHERE app_id = $1 AND rkey = $2", [appId, rkey, JSON.stringify(recomputed)]);
          await tx.query("UPDATE post_stages SET updated_at = $3 WHERE app_id = $1 AND rkey = $2", [appId, rkey, new Date(at + 1000).toISOString()]);
        });
      }
    });
    const post = read === "findPost" ? await findPost(sql, appId, rkey) : (await listPosts(sql, appId, { kind: "own", authorId: "alice" }, undefined, 1)).items[0];
    expect(settled).toBe(true);
    expect(post?.rkey).toBe(rkey);
    expect({ cid: post?.variant?.cid, size: post?.variant?.size, trimAt: post?.processing?.trim?.updatedAt }).toEqual({ cid: "bafknew", size: 90, trimAt: new Date(at + 1000).toISOString() });
    expect(post?.waveform).toEqual(recomputed);
  });
});
