/**
 * One post of the time-to-ready benchmark: a distinct 60 s clip uploaded beforehand (its own CID, so nothing is
 * shared with another post), then, timed: the create with trim, normalize and waveform; every stage's `ready`
 * webhook; the post read and the mp3 rendition's first playback. Then, from both processes' log lines, where that
 * time went.
 */
import http from "node:http";
import { randomBytes } from "node:crypto";
import type { AcceptedMimeType } from "../core/records/accepted-types";
import { makeClip } from "../test/support/rendition-fixtures";
import { readyToken, request, type LogLine, type ReadyStack } from "./ready-stack";

/** A post not ready by then failed the benchmark: something is broken, not slow. */
const postTimeoutMs = 120_000;

export const stages = ["trim", "normalize", "waveform"] as const;
type StageName = (typeof stages)[number];

let sequence = 0;
const fresh = () => {
  const n = ++sequence;
  return { actor: `ready-${n}`, ip: `10.9.${(n >> 8) & 255}.${n & 255}` };
};

/** 60 s at 48 kHz mono in the type's own encoding: 2 s of noise, 56 s of tone, 2 s of noise, the noise seeded by `seed`. */
export const clipFor = (mimeType: AcceptedMimeType, seed: number) =>
  makeClip(mimeType, { lead: 2, tone: 56, tail: 2, noise: true, sampleRate: 48000, seed });

export interface Uploaded {
  actor: string;
  ip: string;
  blob: { ref: { $link: string }; mimeType: string; size: number };
}

export async function upload(stack: ReadyStack, bytes: Buffer, mimeType: string): Promise<Uploaded> {
  const { actor, ip } = fresh();
  const boundary = `----ready${randomBytes(8).toString("hex")}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip"\r\nContent-Type: ${mimeType}\r\n\r\n`);
  const body = Buffer.concat([head, bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const res = await request({
    port: stack.port,
    method: "POST",
    path: "/api/v1/audio/upload",
    headers: { authorization: `Bearer ${readyToken}`, "x-svc-acting-actor": actor, "x-forwarded-for": ip, "content-type": `multipart/form-data; boundary=${boundary}` },
    body,
  });
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.body}`);
  return { actor, ip, blob: (JSON.parse(res.body) as { data: { blob: Uploaded["blob"] } }).data.blob };
}

/** Epoch ms of a post's milestones, as this process saw them. */
export interface PostRun {
  postId: string;
  sourceCid: string;
  started: number;
  created: number;
  ready: Record<StageName, number>;
  /** The mp3 rendition's first byte, and its last. */
  playbackFirstByte: number;
  playbackEnd: number;
}

/** Resolves when the receiver has a webhook for `postId`'s every stage; throws on a failed or skipped one. */
const readyHooks = (stack: ReadyStack, postId: string) =>
  new Promise<Record<StageName, number>>((resolve, reject) => {
    const check = () => {
      const mine = stack.hooks.received.filter((h) => h.json.postId === postId);
      const bad = mine.find((h) => h.json.status !== "ready");
      if (bad) return reject(new Error(`stage ${bad.json.stage} of ${postId} settled ${bad.json.status}`));
      const at = Object.fromEntries(stages.map((s) => [s, mine.find((h) => h.json.stage === s)?.at]));
      if (stages.every((s) => at[s] !== undefined)) return resolve(at as Record<StageName, number>);
      stack.hooks.arrived(stack.hooks.received.length + 1).then(check, reject);
    };
    check();
  });

/** GET with a first-byte time: the player's wait before it can start, and the whole answer's. */
const timedGet = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; firstByte: number; end: number }>((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, headers, agent: false }, (res) => {
        let firstByte = 0;
        res.on("data", () => (firstByte ||= Date.now()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, firstByte: firstByte || Date.now(), end: Date.now() }));
        res.on("error", reject);
      })
      .on("error", reject);
  });

export async function runPost(stack: ReadyStack, uploaded: Uploaded): Promise<PostRun> {
  const headers = { authorization: `Bearer ${readyToken}`, "x-svc-acting-actor": uploaded.actor, "x-forwarded-for": uploaded.ip };
  const body = { text: "time to ready", embed: { $type: "dev.svc.embed.audio", audio: uploaded.blob }, processing: { trim: true, normalize: true, waveform: true } };
  const started = Date.now();
  const created = await request({ port: stack.port, method: "POST", path: "/api/v1/posts", headers: { ...headers, "content-type": "application/json" }, body: Buffer.from(JSON.stringify(body)) });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.body}`);
  const createdAt = Date.now();
  const postId = (JSON.parse(created.body) as { data: { postId: string } }).data.postId;
  const ready = await Promise.race([
    readyHooks(stack, postId),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`post ${postId}: not every stage ready within ${postTimeoutMs} ms`)), postTimeoutMs).unref()),
  ]);
  const view = await request({ port: stack.port, method: "GET", path: `/api/v1/posts/${postId}`, headers });
  const url = new URL((JSON.parse(view.body) as { data: { embed: { url: string } } }).data.embed.url);
  const play = await timedGet(stack.port, `${url.pathname}${url.search}&format=mp3`, { "x-forwarded-for": uploaded.ip });
  if (play.status !== 200) throw new Error(`mp3 playback answered ${play.status}`);
  return { postId, sourceCid: uploaded.blob.ref.$link, started, created: createdAt, ready, playbackFirstByte: play.firstByte, playbackEnd: play.end };
}

/** Where one post's time went, in ms: one row of named parts (ffmpeg runs by their step). */
export type Breakdown = Record<string, number>;

const started = (line: LogLine) => line.at - Number(line.durationMs ?? 0);

export function breakdown(run: PostRun, stack: ReadyStack): Breakdown {
  const service = stack.serviceLines;
  const rendition = stack.renditionLines;
  const parts: Breakdown = { "create (HTTP)": run.created - run.started };
  const jobs = service.filter((l) => l.message === "invocation" && l.invocation === "run-job" && l.postId === run.postId);
  if (jobs[0]) {
    parts["queue wait"] = Math.max(0, started(jobs[0]) - run.created);
    parts.lease = Number(jobs[0].leaseMs ?? 0);
  }
  // The rendition requests of this post, followed from its upload's CID through each stage's output.
  let cid = run.sourceCid;
  for (const stage of stages) {
    const settled = service.find((l) => l.message === "stage settled" && l.postId === run.postId && l.stage === stage);
    const served = rendition.find((l) => l.message === "rendition request" && l.path === `/v1/${stage}` && l.cid === cid);
    if (served) {
      for (const { step, ms } of (served.ffmpeg ?? []) as { step: string; ms: number }[]) parts[`${stage}: ffmpeg ${step}`] = (parts[`${stage}: ffmpeg ${step}`] ?? 0) + ms;
      const ffmpegMs = ((served.ffmpeg ?? []) as { ms: number }[]).reduce((sum, r) => sum + r.ms, 0);
      parts[`${stage}: rendition service, not ffmpeg`] = Number(served.durationMs) - ffmpegMs;
      if (settled) parts[`${stage}: HTTP to the rendition service`] = Math.max(0, Number(settled.providerMs) - Number(served.durationMs));
      if (typeof served.outputCid === "string") cid = served.outputCid;
    }
    if (settled) {
      parts[`${stage}: settle (SQL)`] = Number(settled.settleMs);
      parts[`${stage}: webhook`] = Math.max(0, run.ready[stage] - settled.at);
    }
  }
  parts["every stage ready"] = Math.max(...stages.map((s) => run.ready[s])) - run.started;
  const render = rendition.find((l) => l.message === "rendition request" && l.path === "/v1/render" && l.cid === cid);
  if (render) for (const { step, ms } of (render.ffmpeg ?? []) as { step: string; ms: number }[]) parts[`playback: ffmpeg ${step}`] = ms;
  parts["playback: first byte"] = run.playbackFirstByte - Math.max(...stages.map((s) => run.ready[s]));
  parts["ready and played"] = run.playbackFirstByte - run.started;
  return parts;
}
