/**
 * Webhooks outlive an outage (docs/decisions.md#webhooks): after the quick attempts the outbox keeps an event and
 * the sweep tries it again with exponential backoff, under its one event id, until the give-up age. Time is the
 * harness clock and the sweep's `now`: nothing waits for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { offDispatcher } from "../processing/dispatcher";
import { runPass } from "../processing/run-pass";
import { sweep } from "../processing/sweep";
import type { LogExtra } from "../observability/logger";

const minute = 60_000;
const hour = 60 * minute;

const recordingLog = () => {
  const lines: { level: string; msg: string; extra: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, extra: LogExtra = {}) => void lines.push({ level, msg, extra: extra as Record<string, unknown> });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
};

describe.each(backends)("webhooks that outlive an outage, on $name", (backend) => {
  let h: EnrichmentHarness;
  /** Posts whose webhooks the receiver answers 503 (down), or 400 (refusing). */
  const down = new Set<string>();
  const refusing = new Set<string>();
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, {
      env: { SVC_WAVEFORM: "stub" },
      respond: (hook) => ({ status: down.has(hook.json.postId) ? 503 : refusing.has(hook.json.postId) ? 400 : 200 }),
    });
  });
  afterAll(async () => {
    h?.setClock(undefined);
    await h?.close();
  });

  const sweepAt = (at: number, log = recordingLog()) =>
    sweep(
      { sql: h.sql, dispatcher: offDispatcher, webhooks: h.config.processing.webhooks, retry: h.config.processing.webhookRetry, log, delivery: h.pass.delivery },
      new Date(at),
    );

  /** A post whose waveform settles at `t0` (harness clock), its event's quick attempts spent by the pass. */
  const settledAt = async (t0: number, receiver: Set<string>) => {
    h.setClock(t0);
    const post = await h.createAudioPost({ waveform: true });
    receiver.add(post.postId);
    await runPass(h.pass, { appId: "alpha", postId: post.postId });
    const [event] = await h.events(post.postId);
    return { postId: post.postId, eventId: event!.event_id };
  };

  it("an event undelivered through a 10-minute receiver outage is delivered after it, retried with exponential backoff under its one event id", async () => {
    const t0 = Date.now();
    const { postId, eventId } = await settledAt(t0, down);
    expect(h.hooksFor(postId)).toHaveLength(3); // the three quick attempts, all 503
    expect((await h.events(postId))[0]!.outcome).toBeNull(); // still open: the outbox keeps it

    const roundsAt: number[] = [];
    for (let m = 1; m <= 20; m++) {
      if (m > 10) down.delete(postId); // the receiver is back after 10 minutes
      const before = h.hooksFor(postId).length;
      await sweepAt(t0 + m * minute);
      if (h.hooksFor(postId).length > before) roundsAt.push(m);
    }
    // Due 30 s, then 1, 2, 4 and 8 minutes after each failed round: tried at minutes 1, 2, 4, 8, delivered at 16.
    expect(roundsAt).toEqual([1, 2, 4, 8, 16]);
    const hooks = h.hooksFor(postId);
    expect(hooks).toHaveLength(3 + 4 * 3 + 1);
    expect(new Set(hooks.map((hook) => hook.headers["x-svc-event-id"]))).toEqual(new Set([eventId]));
    expect(new Set(hooks.map((hook) => hook.body.toString()))).toHaveProperty("size", 1);
    expect((await h.events(postId))[0]).toMatchObject({ event_id: eventId, outcome: "delivered" });
  });

  it("a round that fails is logged with when the next one is due, as ISO 8601 UTC with milliseconds", async () => {
    const t0 = Date.now() + 40 * 24 * hour;
    const { postId, eventId } = await settledAt(t0, down);
    const log = recordingLog();
    await sweepAt(t0 + minute, log);
    const later = log.lines.filter((l) => l.msg === "webhook undelivered; tried again later" && l.extra.eventId === eventId);
    expect(later).toHaveLength(1);
    const next = later[0]!.extra.nextAttemptAt as string;
    expect(next).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Due after the round that failed, and the sweep that follows it then tries the event again.
    expect(Date.parse(next)).toBeGreaterThan(t0 + minute);
    const before = h.hooksFor(postId).length;
    await sweepAt(Date.parse(next));
    expect(h.hooksFor(postId).length).toBeGreaterThan(before);
    down.delete(postId);
  });

  it("an event still undelivered 24 hours after its settle is given up, logged once with its event id, and tried no more", async () => {
    const t0 = Date.now() + 2 * 24 * hour;
    const { postId, eventId } = await settledAt(t0, down);
    const log = recordingLog();
    const triedAt: number[] = [];
    for (let at = t0 + 30 * minute; at <= t0 + 26 * hour; at += 30 * minute) {
      const before = h.hooksFor(postId).length;
      await sweepAt(at, log);
      if (h.hooksFor(postId).length > before) triedAt.push(at - t0);
    }
    // Tried through the day (hourly once the backoff reaches its cap), never after the give-up age.
    expect(Math.max(...triedAt)).toBeGreaterThan(23 * hour);
    expect(Math.max(...triedAt)).toBeLessThanOrEqual(24 * hour);
    const givenUp = log.lines.filter((l) => l.msg.startsWith("webhook given up") && l.extra.eventId === eventId);
    expect(givenUp).toHaveLength(1);
    expect(givenUp[0]).toMatchObject({ level: "warn", extra: { eventId, appId: "alpha", postId, stage: "waveform" } });
    expect((await h.events(postId))[0]).toMatchObject({ event_id: eventId, outcome: "given_up" });
    expect(new Set(h.hooksFor(postId).map((hook) => hook.headers["x-svc-event-id"]))).toEqual(new Set([eventId]));
  });

  it("a receiver's refusal (a 4xx other than 408 and 429) is not retried from the outbox", async () => {
    const t0 = Date.now() + 5 * 24 * hour;
    const { postId } = await settledAt(t0, refusing);
    expect(h.hooksFor(postId)).toHaveLength(1);
    for (let m = 1; m <= 5; m++) await sweepAt(t0 + m * minute);
    expect(h.hooksFor(postId)).toHaveLength(1);
    expect((await h.events(postId))[0]!.outcome).toBe("failed");
  });

  it("an event is deleted 30 days after its outcome (delivered, refused or given up), and never while it is open", async () => {
    const t0 = Date.now() + 10 * 24 * hour;
    const delivered = await settledAt(t0, new Set());
    const refused = await settledAt(t0, refusing);
    const open = await settledAt(t0, down);
    const day = 24 * hour;
    const left = async () => (await Promise.all([delivered, refused, open].map(async (p) => (await h.events(p.postId)).length))).join(",");
    await sweepAt(t0 + 2 * hour);
    expect(await left()).toBe("1,1,1");
    // Given up at the first sweep past the give-up age: its outcome dates from then.
    await sweepAt(t0 + 29 * day);
    expect((await h.events(open.postId))[0]!.outcome).toBe("given_up");
    await sweepAt(t0 + 30 * day - minute);
    expect(await left()).toBe("1,1,1");
    await sweepAt(t0 + 30 * day + minute);
    expect(await left()).toBe("0,0,1");
    await sweepAt(t0 + 59 * day + minute);
    expect(await left()).toBe("0,0,0");
  });
});
