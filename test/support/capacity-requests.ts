/**
 * One request of each kind docs/capacity.md prices, against the deployed shape (capacity-harness.ts): an upload
 * through a presigned S3 POST, a create, a read, a list page, a PATCH asking for every stage, the enrichment pass the
 * PATCH queued (the stage function and the rendition function it calls), and the mp3 playback after it.
 */
import { randomBytes } from "node:crypto";
import { audioFixture } from "./audio-fixtures";
import type { CapacityHarness, Cost } from "./capacity-harness";

export const requestKinds = ["upload", "create", "get", "list", "patch", "pass", "playback"] as const;
export type RequestKind = (typeof requestKinds)[number];

type Blob = { ref: { $link: string }; mimeType: string; size: number };

/** Every stage the deployment runs itself: denoise is ElevenLabs' (an outside price), so not requested here. */
const everyStage = { trim: true, normalize: true, transcribe: true, waveform: true };

/** A distinct clip (a few bytes of its middle changed), so every upload is a new object. */
const distinctClip = async () => {
  const clip = Buffer.from((await audioFixture("audio/mpeg")).bytes);
  randomBytes(8).copy(clip, Math.floor(clip.length / 2));
  return clip;
};

/** The three requests of a direct-to-S3 upload: create it, POST the bytes to S3 as a browser would, complete it. */
export async function uploadDirect(h: CapacityHarness, actor: string): Promise<Blob> {
  const bytes = await distinctClip();
  const created = await h.api("create-upload", "POST", "/api/v1/audio/uploads", "/api/v1/audio/uploads", { actor, json: { mimeType: "audio/mpeg", size: bytes.length } });
  if (created.status !== 201) throw new Error(`create-upload ${created.status} ${created.text}`);
  const { uploadId, url, fields } = created.json.data as { uploadId: string; url: string; fields: Record<string, string> };
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("file", new Blob([bytes], { type: "audio/mpeg" }));
  const posted = await fetch(url, { method: "POST", body: form });
  if (posted.status >= 300) throw new Error(`S3 POST ${posted.status} ${await posted.text()}`);
  const path = `/api/v1/audio/uploads/${uploadId}/complete`;
  const done = await h.api("complete-upload", "POST", "/api/v1/audio/uploads/{uploadId}/complete", path, { actor, params: { uploadId } });
  if (done.status !== 201) throw new Error(`complete-upload ${done.status} ${done.text}`);
  return done.json.data.blob as Blob;
}

export async function createPost(h: CapacityHarness, actor: string, blob: Blob): Promise<string> {
  const res = await h.api("create-post", "POST", "/api/v1/posts", "/api/v1/posts", { actor, json: { text: "capacity", embed: { $type: "dev.svc.embed.audio", audio: blob } } });
  if (res.status !== 201) throw new Error(`create-post ${res.status} ${res.text}`);
  return res.json.data.postId as string;
}

/** One post's requests, each measured: its upload, create, read, list page, PATCH, pass and mp3 playback. */
export async function measurePost(h: CapacityHarness, n: number): Promise<Record<RequestKind, Cost>> {
  const actor = `capacity-${n}-${randomBytes(3).toString("hex")}`;
  let blob!: Blob;
  let postId!: string;
  let view: any;
  const costs = {} as Record<RequestKind, Cost>;
  costs.upload = await h.measure(async () => (blob = await uploadDirect(h, actor)));
  costs.create = await h.measure(async () => (postId = await createPost(h, actor, blob)));
  const params = { postId };
  costs.get = await h.measure(async () => {
    const res = await h.api("get-post", "GET", "/api/v1/posts/{postId}", `/api/v1/posts/${postId}`, { actor, params });
    if (res.status !== 200) throw new Error(`get-post ${res.status} ${res.text}`);
  });
  costs.list = await h.measure(async () => {
    const res = await h.api("list-posts", "GET", "/api/v1/posts", "/api/v1/posts?limit=20", { actor });
    if (res.status !== 200) throw new Error(`list-posts ${res.status} ${res.text}`);
  });
  costs.patch = await h.measure(async () => {
    const res = await h.api("patch-post", "PATCH", "/api/v1/posts/{postId}", `/api/v1/posts/${postId}`, { actor, params, json: { processing: everyStage } });
    if (res.status !== 202) throw new Error(`patch-post ${res.status} ${res.text}`);
  });
  const job = await h.nextJob();
  costs.pass = await h.measure(() => h.invoke("process-queue", job, 300_000));
  const read = await h.api("get-post", "GET", "/api/v1/posts/{postId}", `/api/v1/posts/${postId}`, { actor, params });
  view = read.json.data;
  const settled = Object.entries(view.processing as Record<string, { status: string }>).filter(([, s]) => s.status !== "ready");
  if (settled.length > 0) throw new Error(`stages not ready after the pass: ${JSON.stringify(view.processing)}`);
  costs.playback = await h.measure(async () => {
    const url = new URL(`${view.embed.url}&format=mp3`);
    const res = await h.api("get-audio", "GET", "/api/v1/audio", `${url.pathname}${url.search}`);
    if (res.status !== 302) throw new Error(`get-audio ${res.status} ${res.text}`);
  });
  return costs;
}
