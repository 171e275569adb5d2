/**
 * The rendition service's HTTP surface, runtime-neutral (the Node server and the Lambda function URL both call it):
 * bearer auth, the operations of docs/decisions.md#rendition-service and docs/decisions.md#loudness, and the
 * service's envelope.
 */
import { randomUUID } from "node:crypto";
import { invocationLogger, type Logger } from "../observability/logger";
import { bearerToken, secretMatches } from "../tenancy/service-token";
import { SourceMissingError } from "./blob-files";
import { denoiseAudio } from "./denoise-audio";
import { normalizeAudio } from "./normalize-audio";
import { renderMp3 } from "./render-mp3";
import type { RenditionContext, RenditionSource } from "./rendition-context";
import { parseRenditionRequest, type RequestIssue } from "./rendition-request";
import { FfmpegError, type FfmpegTiming } from "./run-ffmpeg";
import { trimAudio } from "./trim-audio";
import { waveformAudio } from "./waveform-audio";

export interface RenditionHttpRequest {
  method: string;
  path: string;
  /** Header names lower-cased. */
  headers: Readonly<Record<string, string | undefined>>;
  body: string;
  /** Aborts when the caller has gone (its connection closed before the answer): a run no caller waits for stops. */
  signal?: AbortSignal;
}

export interface RenditionHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const operations = {
  "/v1/trim": trimAudio,
  "/v1/denoise": denoiseAudio,
  "/v1/normalize": normalizeAudio,
  "/v1/render": renderMp3,
  "/v1/waveform": waveformAudio,
} satisfies Record<string, (context: RenditionContext, source: RenditionSource) => Promise<unknown>>;

/** Request bodies are three short strings; anything near this is not a rendition request. */
export const maxRequestBytes = 4096;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export interface RenditionServiceOptions {
  context: RenditionContext;
  /** RENDITION_SERVICE_TOKEN, else SYSTEM_AUTH_TOKEN; undefined makes every route answer 503 (fail closed). */
  token: string | undefined;
  logger: Logger;
}

export function createRenditionService({ context, token, logger }: RenditionServiceOptions) {
  // Identical concurrent requests (two playback misses for one rendition) share one run, which stops (its ffmpeg
  // runs killed) once every caller waiting for it has gone (a pass past its deadline or its lease). A render does not:
  // it is stored where every later playback looks, so it finishes for them even when the playback that asked for it
  // gave up waiting (a long clip's render can take longer than a playback waits).
  const stoppable = (path: keyof typeof operations) => path !== "/v1/render";
  const inflight = new Map<string, { result: Promise<unknown>; callers: number; stop: AbortController }>();

  // A request that joins a run already going records no ffmpeg runs of its own: the first one's line has them.
  const run = (path: keyof typeof operations, source: RenditionSource, timings: FfmpegTiming[], gone?: AbortSignal) => {
    const key = `${path} ${source.appId}/${source.cid} ${source.mimeType}${source.measureOutput ? " measured" : ""}`;
    let shared = inflight.get(key);
    if (!shared) {
      const stop = new AbortController();
      const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal;
      const entry = { result: operations[path]({ ...context, signal, timings }, source), callers: 0, stop };
      // Only this run's own entry: a stopped run's key may already name a newer run.
      const forget = () => inflight.get(key) === entry && inflight.delete(key);
      entry.result.then(forget, forget);
      shared = entry;
      inflight.set(key, shared);
    }
    const joined = shared;
    if (!stoppable(path)) return joined.result;
    joined.callers += 1;
    gone?.addEventListener(
      "abort",
      () => {
        if (--joined.callers > 0) return;
        // A request arriving now starts a run of its own rather than joining one being stopped.
        if (inflight.get(key) === joined) inflight.delete(key);
        joined.stop.abort(gone.reason);
      },
      { once: true },
    );
    return joined.result;
  };

  return async function handle(request: RenditionHttpRequest): Promise<RenditionHttpResponse> {
    const started = Date.now();
    const presentedId = request.headers["x-request-id"];
    const requestId = presentedId && uuid.test(presentedId) ? presentedId : randomUUID();
    const log = invocationLogger(logger, requestId);
    const timings: FfmpegTiming[] = [];
    let source: RenditionSource | undefined;
    let output: unknown;
    const answer = (status: number, body: object): RenditionHttpResponse => {
      log.info("rendition request", {
        method: request.method,
        path: request.path,
        status,
        durationMs: Date.now() - started,
        ...(source && { appId: source.appId, cid: source.cid }),
        ...(typeof output === "string" && { outputCid: output }),
        ...(timings.length > 0 && { ffmpeg: timings }),
      });
      return { status, headers: { "Content-Type": "application/json", "X-Request-ID": requestId }, body: JSON.stringify(body) };
    };
    const fail = (status: number, code: string, message: string, issues?: RequestIssue[]) =>
      answer(status, { success: false, error: { message, code, ...(issues && { issues }) }, requestId });

    if (token === undefined) return fail(503, "SERVICE_UNAVAILABLE", "the rendition service has no token configured");
    const presented = bearerToken(request.headers.authorization);
    if (presented === undefined || !secretMatches(presented, token)) return fail(401, "UNAUTHORIZED", "missing or invalid bearer token");

    const path = request.path as keyof typeof operations;
    if (request.method !== "POST" || !Object.hasOwn(operations, path)) return fail(404, "NOT_FOUND", "no such route");
    if (Buffer.byteLength(request.body) > maxRequestBytes) return fail(400, "VALIDATION_ERROR", "body too large");
    const parsed = parseRenditionRequest(request.body);
    if (!parsed.ok) return fail(400, "VALIDATION_ERROR", "invalid request body", parsed.issues);

    source = parsed.source;
    const closed = () => answer(499, { success: false, error: { message: "the caller closed the request", code: "CLIENT_CLOSED" }, requestId });
    if (request.signal?.aborted) return closed();
    try {
      const data = await run(path, parsed.source, timings, request.signal);
      output = (data as { cid?: unknown }).cid;
      return answer(200, { success: true, data });
    } catch (error) {
      // Nobody is left to read the answer; the status is for the log line (nginx's "client closed request").
      if (request.signal?.aborted) return closed();
      if (error instanceof SourceMissingError) return fail(404, "NOT_FOUND", "source blob not found");
      if (error instanceof FfmpegError) {
        // ffmpeg's stderr explains the failure to the operator; the caller only learns that it failed.
        log.error("ffmpeg failed", { path: request.path, appId: parsed.source.appId, cid: parsed.source.cid, error: error.message, stderr: error.stderr });
        return fail(502, "INTERNAL", "ffmpeg failed to process the audio");
      }
      log.error("rendition failed", { path: request.path, error: error instanceof Error ? error.message : String(error) });
      return fail(500, "INTERNAL", "internal error");
    }
  };
}

export type RenditionService = ReturnType<typeof createRenditionService>;
