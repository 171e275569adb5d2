import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCodes } from "../core/domain-error";
import { routeList } from "../functions/routes";
import { audioFixture } from "./support/audio-fixtures";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { createPost } from "./support/post-bodies";
import { requestsFor, type FuzzContext, type FuzzRequest } from "./support/route-requests";
import { startTestService, type TestService } from "./support/test-service";

/**
 * Requests generated from the route table's schemas, valid and hostile, against the real Node host. Seeded and
 * bounded (FUZZ_SEED and FUZZ_RUNS override), so CI replays the same requests; a failure prints its seed and path.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20261122);
const numRuns = Number(process.env.FUZZ_RUNS ?? 2_000);
const codes = new Set<string>(errorCodes);

const strayPaths = fc.constantFrom("/", "/nope", "/api/v1", "/api/v1/posts/a/b/c", "/api/v1/posts/%zz", "/api/v1//posts", "/.well-known/did.json", "/health/");

describe.each(backends)("route-table fuzz over the Node host on $name", ({ open }) => {
  let svc: TestService;
  const postIds: string[] = [];
  const postRefs: { uri: string; cid: string }[] = [];
  const blobCids: string[] = [];
  const playbackQueries: string[] = [];
  const statuses: Record<number, number> = {};
  const reasons: Record<string, number> = {};

  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: open });
    for (const actor of ["fuzz-1", "fuzz-2"]) {
      const post = await createPost(svc, actor, { text: `seed by ${actor}` });
      postIds.push(post.uri.split("/").pop()!);
      postRefs.push({ uri: post.uri, cid: post.cid });
    }
    const { body, contentType } = await multipartBody([{ name: "file", bytes: (await audioFixture("audio/wav")).bytes, type: "audio/wav" }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor: "fuzz-1", body, headers: { "content-type": contentType } });
    blobCids.push(uploaded.json.data.blob.ref.$link);
    const withAudio = await createPost(svc, "fuzz-1", { text: "audio", embed: { $type: "dev.svc.embed.audio", audio: uploaded.json.data.blob } });
    const playback = new URL((withAudio as unknown as { embed: { url: string } }).embed.url);
    playbackQueries.push(playback.search.slice(1), `${playback.search.slice(1)}&format=mp3`, `${playback.search.slice(1)}&format=flac`);
  });
  afterAll(async () => {
    if (process.env.FUZZ_STATS) console.log(JSON.stringify(statuses), Object.entries(reasons).sort((a, b) => b[1] - a[1]).slice(0, 15));
    await svc?.close();
  });

  it(`${numRuns} generated requests: no 5xx, every error an envelope with a code from the closed set, and the process stays up`, async () => {
    const ctx: FuzzContext = {
      tokens: [svc.tenants.alpha.token, svc.tenants.beta.token],
      systemToken: svc.deps.config.systemAuthToken!,
      postIds: () => postIds,
      postRefs: () => postRefs,
      blobCids: () => blobCids,
      signedQueries: { "get-audio": () => playbackQueries },
    };
    const requests = fc.oneof(
      ...routeList.map((route) => ({ weight: route.auth === "public" ? 1 : 4, arbitrary: requestsFor(route, ctx) })),
      { weight: 1, arbitrary: strayPaths.map((path): FuzzRequest => ({ method: "GET", path, headers: {} })) },
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(requests, async (req) => {
        n++;
        // A fresh client address per request: the aggregate IP limits would otherwise answer most of the run.
        const headers = { ...req.headers, "x-forwarded-for": `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
        const res = await fetch(svc.baseUrl + req.path, { method: req.method, headers, body: req.body ? new Uint8Array(req.body) : undefined, redirect: "manual" });
        const text = await res.text();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (process.env.FUZZ_STATS && res.status === 400) {
          const e = JSON.parse(text).error;
          const k = `${req.method} ${req.path.split("?")[0]!.slice(0, 30)} ${e.message} ${JSON.stringify(e.issues?.[0]?.path)}`;
          reasons[k] = (reasons[k] ?? 0) + 1;
        }
        const where = `${req.method} ${req.path} -> ${res.status} ${text.slice(0, 300)}`;
        expect(res.status, where).toBeLessThan(500);
        expect(res.headers.get("x-request-id"), where).toBeTruthy();
        if (res.status >= 400) {
          const body = JSON.parse(text);
          expect(body.success, where).toBe(false);
          expect(codes.has(body.error?.code), where).toBe(true);
          expect(typeof body.error.message, where).toBe("string");
          expect(body.requestId, where).toBe(res.headers.get("x-request-id"));
        }
        if (req.method === "POST" && req.path === "/api/v1/posts" && res.status === 201) {
          const postId = JSON.parse(text).data.postId as string;
          postIds.push(postId);
          const view = await svc.get(`/api/v1/posts/${postId}`, { token: req.headers.authorization?.slice(7) });
          if (view.status === 200) postRefs.push({ uri: view.json.data.uri, cid: view.json.data.cid });
        }
      }),
      { seed, numRuns, endOnFailure: true },
    );
    expect(n).toBe(numRuns);
    // Still serving, and still writing.
    expect((await svc.get("/health", { token: null })).status).toBe(200);
    expect((await svc.post("/api/v1/posts", { actor: "after-fuzz", json: { text: "still here" } })).status).toBe(201);
  }, 120_000);
});
