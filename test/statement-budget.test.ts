import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPost, replyTo } from "./support/post-bodies";
import { backends } from "./support/databases";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService, type TestService } from "./support/test-service";

/**
 * Every SQL statement is a round trip on the Data API, so requests have a budget: reads at most 2 (one, as the rate
 * limits ride in the read's statement), a create at most 4, and nothing that grows with page size. The request log line reports the count.
 */
describe("SQL statements per request, as the request log line reports them", () => {
  let svc: TestService;
  let lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      sql: backends[0]!.open,
      env: { LOG_LEVEL: "info", SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true" },
    });
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = chunk.toString();
      if (text.includes('"message":"request"')) {
        for (const line of text.trim().split("\n")) lines.push(JSON.parse(line));
        return true;
      }
      return write(chunk, ...(rest as []));
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await svc?.close();
  });

  const statementsOf = async (send: () => Promise<{ headers: Record<string, string> }>) => {
    lines = [];
    const res = await send();
    await vi.waitFor(() => expect(lines.find((l) => l.requestId === res.headers["x-request-id"])).toBeDefined());
    return lines.find((l) => l.requestId === res.headers["x-request-id"])!.sqlStatements as number;
  };

  it("a GET of one post costs one statement: its rate limits are taken in the statement of the read", async () => {
    const post = await createPost(svc, "b-1");
    const id = post.uri.split("/").pop();
    expect(await statementsOf(() => svc.get(`/api/v1/posts/${id}`, { actor: "b-1" }))).toBe(1);
    expect(await statementsOf(() => svc.get(`/api/v1/posts/${id}`))).toBe(1);
    expect(await statementsOf(() => svc.get("/api/v1/posts/3zzzzzzzzzzzz", { actor: "b-1" }))).toBe(1);
  });

  it("a create costs at most 4 statements, even a reply with an Idempotency-Key", async () => {
    const prompt = await createPost(svc, "b-2");
    expect(await statementsOf(() => svc.post("/api/v1/posts", { actor: "b-2", json: { text: "p" } }))).toBeLessThanOrEqual(4);
    const reply = () => svc.post("/api/v1/posts", { actor: "b-3", json: replyTo(prompt), headers: { "idempotency-key": "budget" } });
    expect(await statementsOf(reply)).toBeLessThanOrEqual(4);
  });

  it("reads bring each post's stages, transcript, waveform and processed variant within the same budget", async () => {
    const actor = "b-6";
    for (let i = 0; i < 3; i++) {
      const blob = await seedAudio(svc.deps, "alpha");
      await svc.post("/api/v1/posts", { actor, json: audioPost(blob, { denoise: true, trim: true, transcribe: true, waveform: true }) });
    }
    const list = await svc.get("/api/v1/posts?limit=100", { actor });
    expect(list.json.data.items).toHaveLength(3);
    for (const item of list.json.data.items) {
      expect(item.processing.waveform.status).toBe("ready");
      expect(item.embed.transcript.text).toBeTruthy();
      expect(item.embed.waveform.version).toBe(2);
    }
    const id = list.json.data.items[0].uri.split("/").pop();
    expect(await statementsOf(() => svc.get(`/api/v1/posts/${id}`, { actor }))).toBeLessThanOrEqual(2);
    const one = await statementsOf(() => svc.get("/api/v1/posts?limit=1", { actor }));
    const all = await statementsOf(() => svc.get("/api/v1/posts?limit=100", { actor }));
    expect(one).toBeLessThanOrEqual(2);
    expect(all).toBe(one);
  });

  it("list items carry waveform overviews (at most 256 points) for the same statements as a single read of the full one", async () => {
    const actor = "b-8";
    for (const minutes of [1, 10]) {
      const blob = await seedAudio(svc.deps, "alpha", undefined, minutes * 60_000);
      await svc.post("/api/v1/posts", { actor, json: audioPost(blob, { waveform: true }) });
    }
    const items = (await svc.get("/api/v1/posts?limit=100", { actor })).json.data.items;
    const id = items[0].uri.split("/").pop();
    expect((await svc.get(`/api/v1/posts/${id}`, { actor })).json.data.embed.waveform.length).toBe(12_000);
    for (const item of items) expect(item.embed.waveform.length).toBeLessThanOrEqual(256);
    const single = await statementsOf(() => svc.get(`/api/v1/posts/${id}`, { actor }));
    expect(single).toBeLessThanOrEqual(2);
    expect(await statementsOf(() => svc.get("/api/v1/posts?limit=100", { actor }))).toBe(single);
  });

  it("a PATCH costs at most 3 statements (rate limit, the checked stage write, the view); the inline pass is the worker's", async () => {
    const actor = "b-7";
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor, json: audioPost(blob) });
    const patch = () => svc.call("PATCH", `/api/v1/posts/${created.json.data.postId}`, { actor, json: { processing: { transcribe: true } } });
    expect(await statementsOf(patch)).toBeLessThanOrEqual(3);
  });

  it("a list page costs at most 2 statements whatever its size (no N+1)", async () => {
    for (let i = 0; i < 8; i++) await svc.post("/api/v1/posts", { actor: `b-4-${i % 4}`, json: { text: `${i}` } });
    const small = await statementsOf(() => svc.get("/api/v1/posts?limit=1", { actor: "b-4-0" }));
    const large = await statementsOf(() => svc.get("/api/v1/posts?limit=100", { actor: "b-4-0" }));
    expect(small).toBeLessThanOrEqual(2);
    expect(large).toBe(small);
  });

  it("the request log line carries the request id, route, status and duration", async () => {
    lines = [];
    const res = await svc.get("/api/v1/posts", { actor: "b-5" });
    await vi.waitFor(() => expect(lines.length).toBeGreaterThan(0));
    expect(lines[0]).toMatchObject({ requestId: res.headers["x-request-id"], route: "list-posts", status: 200, sqlStatements: 1 });
    expect(lines[0]!.durationMs).toEqual(expect.any(Number));
  });
});
