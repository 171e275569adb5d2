/** A request answered 503 at its deadline still runs; what its late answer opened is closed, not left to GC. */
import { readdirSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "./support/databases";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { slowedSql } from "./support/slowed-sql";
import { startTestService, type TestService } from "./support/test-service";

/** The files this process has open under `dir`. */
const openFilesUnder = (dir: string) =>
  readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((target) => target.startsWith(dir));

describe.skipIf(process.platform !== "linux")("a playback answered 503 at its request deadline", () => {
  let svc: TestService;
  /** Set to slow the next rate-limit take past the deadline. */
  let slowTake = false;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      // A deadline every request not slowed meets even on a loaded machine; the take is held a second past it.
      env: { SVC_REQUEST_DEADLINE_MS: "1500" },
      // The playback's first statement, its rate-limit take, answers past the deadline.
      sql: slowedSql(backends[0]!.open, (text) => (slowTake && text.includes("rate_limit_take") ? ((slowTake = false), 2_500) : undefined)),
    });
  });
  afterAll(() => svc?.close());

  it("closes the file its late answer opened: nobody reads it, and an open handle per late playback would pile up", async () => {
    const post = await svc.post("/api/v1/posts", { actor: "late", json: audioPost(await seedAudio(svc.deps, "alpha")) });
    const view = await svc.get(`/api/v1/posts/${post.json.data.postId}`, { actor: "late" });
    const url = new URL(view.json.data.embed.url as string);
    // The late answer opens the blob after its statement returns (and another); waiting for that open itself, not for
    // the statement, so the files are looked at once there is one to close.
    const blobs = svc.deps.blobs;
    const read = blobs.read.bind(blobs);
    const opened = new Promise<void>((resolve) => {
      blobs.read = async (...args) => {
        const found = await read(...args);
        resolve();
        return found;
      };
    });
    slowTake = true;
    const res = await svc.get(url.pathname + url.search, { token: null });
    expect(res.status).toBe(503);
    await opened;
    await expect.poll(() => openFilesUnder(svc.blobDir), { timeout: 2_000 }).toEqual([]);
  });
});
