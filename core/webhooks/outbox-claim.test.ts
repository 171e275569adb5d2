/**
 * A delivery records its outcome only under the claim it was taken with (docs/decisions.md#webhooks): one that ends
 * after an operator reopened its event and the sweep delivered it (a slow receiver, a frozen Lambda) leaves the
 * event as the later delivery left it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { offDispatcher } from "../processing/dispatcher";
import { runPass } from "../processing/run-pass";
import { sweep } from "../processing/sweep";
import { listUndelivered, redeliver } from "./undelivered-events";

const quiet = { info() {}, warn() {}, error() {} };

describe.each(backends)("a delivery that outlives its claim, on $name", (backend) => {
  let h: EnrichmentHarness;
  /** Posts whose first webhook the receiver holds until released, then refuses (410). */
  const held = new Map<string, { release: () => void; until: Promise<void> }>();
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, {
      env: { SVC_WAVEFORM: "stub" },
      respond: (hook) => {
        const hold = held.get(hook.json.postId);
        if (!hold) return { status: 200 };
        held.delete(hook.json.postId);
        return { status: 410, until: hold.until };
      },
    });
  });
  afterAll(async () => {
    for (const hold of held.values()) hold.release();
    await h?.close();
  });

  it("records nothing once an operator reopened the event and the sweep delivered it: the event stays delivered and is not sent again", async () => {
    const post = await h.createAudioPost({ waveform: true });
    let release!: () => void;
    held.set(post.postId, { release: () => release(), until: new Promise<void>((resolve) => (release = resolve)) });
    let stale: Promise<unknown> | undefined;
    await runPass(
      { ...h.pass, delivery: { ...h.pass.delivery, timeoutMs: 60_000 }, background: (work) => void (stale = work) },
      { appId: "alpha", postId: post.postId },
    );
    await h.receiver.arrived(1);
    const [event] = await h.events(post.postId);

    expect(await redeliver(h.sql, "alpha", [event!.event_id], new Date())).toEqual([event!.event_id]);
    const outbox = { sql: h.sql, dispatcher: offDispatcher, webhooks: h.config.processing.webhooks, retry: h.config.processing.webhookRetry, log: quiet, delivery: h.pass.delivery };
    await sweep(outbox, new Date());
    expect((await h.events(post.postId))[0]!.outcome).toBe("delivered");

    release();
    await stale;
    expect((await h.events(post.postId))[0]!.outcome).toBe("delivered");
    expect((await listUndelivered(h.sql, "alpha", 1000)).map((e) => e.eventId)).not.toContain(event!.event_id);
    await sweep(outbox, new Date(Date.now() + 3_600_000));
    expect(h.hooksFor(post.postId)).toHaveLength(2);
  });
});
