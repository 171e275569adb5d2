import type { components, operations } from "./generated/openapi.js";
import { PageList, type Page } from "./pages.js";
import { getAudio, type GetAudioOptions } from "./play-audio.js";
import { retryDefaults, type RetryOptions } from "./retry-policy.js";
import { send, type Actor, type CallOptions, type Transport } from "./transport.js";
import { uploadAudio, type AudioData, type BlobRef, type UploadAudioOptions } from "./upload-audio.js";

type Schemas = components["schemas"];
type JsonBody<Op> = Op extends { requestBody: { content: { "application/json": infer B } } } ? B : never;
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Data<Op, Status extends number> = Op extends { responses: { [S in Status]: { content: { "application/json": { data: infer D } } } } } ? D : never;

export type PostView = Schemas["AudioPostView"];
export type AudioEmbedView = Schemas["AudioEmbedView"];
export type Transcript = Schemas["Transcript"];
export type Waveform = Schemas["Waveform"];
export type ProcessingRequest = Schemas["ProcessingRequest"];
export type ProcessingState = Schemas["ProcessingState"];
export type CreatePostBody = JsonBody<operations["createPost"]>;
export type PatchPostBody = JsonBody<operations["patchPost"]>;
/** Query values travel as text; `limit` (1 to 100, default 20) is given as a number. */
type WithLimit<Q> = Omit<Q, "limit"> & { limit?: number };
export type ListPostsQuery = WithLimit<Query<operations["listPosts"]>>;
export type ListRepliesQuery = WithLimit<Query<operations["listReplies"]>>;
export type CreateUploadBody = JsonBody<operations["createUpload"]>;
export type DirectUpload = Data<operations["createUpload"], 201>;
export type Health = Data<operations["health"], 200>;

export interface ClientOptions {
  /** The service's base address, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** The tenant's service token: keep it server-side. */
  token: string;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Per attempt, answer included (default 30 s). */
  timeoutMs?: number;
  /** Backoff and the longest Retry-After waited for (default 500 ms doubling to 8 s; 60 s). */
  retry?: Partial<Omit<RetryOptions, "maxRetries">>;
  /** The fetch to use (default the platform's). */
  fetch?: typeof fetch;
  /** How to wait between attempts (default a timer); it is handed the call's signal, to stop waiting on abort. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface WriteOptions extends CallOptions {
  /** Sent on every attempt of this call; a fresh one is made per call when absent. */
  idempotencyKey?: string;
}

/**
 * The service's operations, acting as one actor (or none: viewer-less reads). Methods are the OpenAPI operationIds;
 * each answers the envelope's `data`, or throws SvcError (an error answer) or SvcNetworkError (no answer).
 */
export class SvcClient {
  constructor(
    private readonly transport: Transport,
    private readonly who: Actor = {},
  ) {}

  /** The same client acting as `actor` (the tenant's own user id), optionally with the actor's DID. */
  as(actor: string, options: { did?: string } = {}): SvcClient {
    return new SvcClient(this.transport, { actor, did: options.did });
  }

  uploadAudio(data: AudioData, options?: UploadAudioOptions): Promise<BlobRef> {
    return uploadAudio(this.transport, this.who, data, options);
  }

  createPost(body: CreatePostBody, options: WriteOptions = {}): Promise<{ postId: string }> {
    return this.write("POST", "/api/v1/posts", body, options);
  }

  getPost(postId: string, options: CallOptions = {}): Promise<PostView> {
    return send(this.transport, this.who, { method: "GET", path: `/api/v1/posts/${encodeURIComponent(postId)}`, ...options });
  }

  listPosts(query: ListPostsQuery = {}, options: CallOptions = {}): PageList<PostView> {
    const { cursor, ...rest } = query;
    return new PageList(
      (next) => send<Page<PostView>>(this.transport, this.who, { method: "GET", path: "/api/v1/posts", query: { ...rest, cursor: next }, ...options }),
      cursor,
    );
  }

  listReplies(postId: string, query: ListRepliesQuery = {}, options: CallOptions = {}): PageList<PostView> {
    const { cursor, ...rest } = query;
    const path = `/api/v1/posts/${encodeURIComponent(postId)}/replies`;
    return new PageList((next) => send<Page<PostView>>(this.transport, this.who, { method: "GET", path, query: { ...rest, cursor: next }, ...options }), cursor);
  }

  /** Requests enrichment stages of the actor's post; answers the view with the stages' state. */
  patchPost(postId: string, body: PatchPostBody, options: WriteOptions = {}): Promise<PostView> {
    return this.write("PATCH", `/api/v1/posts/${encodeURIComponent(postId)}`, body, options);
  }

  /** Step one of a direct-to-storage upload by hand (S3 deployments; 404 elsewhere). `uploadAudio` does it all. */
  createUpload(body: CreateUploadBody, options: CallOptions = {}): Promise<DirectUpload> {
    return send(this.transport, this.who, { method: "POST", path: "/api/v1/audio/uploads", json: body, ...options });
  }

  /** Step three, after the bytes went to `url`: the service hashes and stores them. Retried: a second completion answers the same blob. */
  completeUpload(uploadId: string, options: CallOptions = {}): Promise<{ blob: BlobRef }> {
    return send(this.transport, this.who, { method: "POST", path: `/api/v1/audio/uploads/${encodeURIComponent(uploadId)}/complete`, ...options });
  }

  /** The audio behind a view's signed `embed.url` (a browser plays that URL itself): the Response, to stream. */
  getAudio(url: string, options?: GetAudioOptions): Promise<Response> {
    return getAudio(this.transport, url, "GET", options);
  }

  /** The headers `getAudio` would answer (type, length, ETag), without the bytes. */
  getAudioHead(url: string, options?: GetAudioOptions): Promise<Response> {
    return getAudio(this.transport, url, "HEAD", options);
  }

  health(options: CallOptions = {}): Promise<Health> {
    return send(this.transport, {}, { method: "GET", path: "/health", ...options });
  }

  /** POST and PATCH: retried only under one Idempotency-Key, the caller's or one made for this call. */
  private write<T>(method: "POST" | "PATCH", path: string, body: unknown, options: WriteOptions): Promise<T> {
    const { idempotencyKey, signal } = options;
    return send(this.transport, this.who, { method, path, json: body, idempotencyKey, signal });
  }
}

/** A wait that an abort ends and clears: a pending timer would hold the process open for up to a minute (Retry-After). */
const timer = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(pending);
      reject(signal!.reason);
    };
    const pending = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

export const createClient = (options: ClientOptions): SvcClient =>
  new SvcClient({
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: { ...retryDefaults, ...options.retry, maxRetries: options.maxRetries ?? retryDefaults.maxRetries },
    sleep: options.sleep ?? timer,
    directUploads: undefined,
  });
