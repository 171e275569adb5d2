import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { slowedSql } from "../../test/support/slowed-sql";
import { startTestService, type TestService } from "../../test/support/test-service";
import { freshActor, recordingClient } from "./support/client-harness";

describe("a create answered 503 at the service's request deadline, through the client", () => {
  let svc: TestService;
  /** Set to hold the next post insert past the deadline, as a slow database would. */
  let slowInsert = false;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      env: { SVC_REQUEST_DEADLINE_MS: "300" },
      sql: slowedSql(backends[0]!.open, (text) => (slowInsert && text.includes("INSERT INTO posts") ? ((slowInsert = false), 1_000) : undefined)),
    });
  });
  afterAll(() => svc?.close());

  it("is retried under its Idempotency-Key and succeeds with exactly one post, not failed with the 409 of a key still held", async () => {
    const { client, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const actor = freshActor("deadline");
    slowInsert = true;
    const { postId } = await client.as(actor).createPost({ text: "once" });
    expect(requests.filter((r) => r.method === "POST")).toHaveLength(2);
    // The first attempt's write, still running behind its 503, stores nothing once the retry holds the key.
    await new Promise((r) => setTimeout(r, 1_200));
    const page = await client.as(actor).listPosts();
    expect(page.items.map((p) => p.uri.split("/").pop())).toEqual([postId]);
  });
});
