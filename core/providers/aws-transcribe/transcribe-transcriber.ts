/**
 * The `aws-transcribe` transcriber (the platform transcriber): StartTranscriptionJob on the blob's `s3://` URI under
 * a name derived from the blob and the model, then GetTranscriptionJob until COMPLETED or FAILED, bounded by the
 * call's deadline. A job still running then is `retry`: the queue's next attempt finds the same job by its name
 * instead of sleeping through the worker's time. The transcript is read from the job's TranscriptFileUri. Every job
 * labels speakers; without a pinned language code Transcribe identifies the language. Transcribe keeps a job, and
 * so its name, for 90 days: a FAILED job an earlier request left under the name is deleted and the job started
 * again, or a rerun of the stage on that blob would only ever find that failure.
 */
import { createHash } from "node:crypto";
import {
  DeleteTranscriptionJobCommand,
  GetTranscriptionJobCommand,
  type LanguageCode,
  type MediaFormat,
  StartTranscriptionJobCommand,
  type TranscribeClient,
  type TranscriptionJob,
} from "@aws-sdk/client-transcribe";
import type { AcceptedMimeType } from "../../records/accepted-types";
import { blobKey } from "../../blobs/blob-key";
import { type AudioRef, type ProviderCall, ProviderError, type Transcriber } from "../provider-port";
import { providerFetch, ranOutOfTime, readJson } from "../provider-http";
import { languageTag } from "../language-tag";
import { parseTranscribeOutput } from "./transcribe-output";

export interface TranscribeOptions {
  client: TranscribeClient;
  /** The S3 blob store's bucket (SVC_BLOB_BUCKET). */
  bucket: string;
  /**
   * SVC_PLATFORM_STT_MODEL or a pin: a Transcribe language code (`en-US`) fixes the language; unset or `auto`
   * lets Transcribe identify it. Transcribe has no other model choice for batch jobs.
   */
  model?: string;
  /** Between two GetTranscriptionJob calls. */
  pollMs?: number;
  fetch?: typeof fetch;
}

const mediaFormats: Record<AcceptedMimeType, MediaFormat> = {
  "audio/wav": "wav",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/webm": "webm",
  "audio/m4a": "m4a",
  "audio/x-m4a": "m4a",
  "audio/mp4": "mp4",
};

const languageCode = /^[a-z]{2,3}-[A-Z]{2,3}$/;

/** Transcribe needs a ceiling when it labels speakers (2 to 30); a voice post rarely has more than a few. */
const maxSpeakers = 10;

/** Deterministic, so a retried job finds the one already started: same blob, same model, same job. */
export const transcriptionJobName = (audio: Pick<AudioRef, "appId" | "cid">, model: string | undefined): string =>
  `svc-${audio.appId}-${audio.cid}-${createHash("sha256").update(model ?? "auto").digest("hex").slice(0, 8)}`;

const retryableNames = new Set(["ThrottlingException", "LimitExceededException", "TooManyRequestsException", "InternalFailureException", "ServiceUnavailableException"]);

/** The SDK's errors on the port's rule: throttling, 5xx and no answer at all are `retry`; other 4xx are `fail`. */
function providerErrorOf(error: unknown, step: string, timedOut: boolean): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  // An error with a status is an answer, whenever it came; without one, out of time is a timeout.
  if ((timedOut && status === undefined) || e.name === "AbortError" || e.name === "TimeoutError") return new ProviderError("retry", `aws-transcribe ${step}: timed out`, "timeout");
  if (retryableNames.has(e.name ?? "") || status === undefined || status === 429 || status >= 500) {
    return new ProviderError("retry", `aws-transcribe ${step}: ${e.name ?? "network error"}${status ? ` (HTTP ${status})` : ""}`);
  }
  return new ProviderError("fail", `aws-transcribe ${step}: ${e.name ?? "error"} (HTTP ${status})`);
}

export function createTranscribeTranscriber(options: TranscribeOptions): Transcriber {
  const { client, bucket, model } = options;
  const pollMs = options.pollMs ?? 2000;
  const pinned = model && model !== "auto" ? model : undefined;

  const send = async <T>(step: string, call: ProviderCall, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> => {
    const remaining = call.deadline - Date.now();
    if (remaining <= 0) throw new ProviderError("retry", `aws-transcribe ${step}: no time left before the deadline`, "timeout");
    const timeout = AbortSignal.timeout(remaining);
    try {
      return await run(AbortSignal.any([call.signal, timeout]));
    } catch (error) {
      throw providerErrorOf(error, step, timeout.aborted || ranOutOfTime(error, call));
    }
  };

  /** Answers whether this call started the job (false: a job of that name was there already). */
  const start = (audio: AudioRef, name: string, call: ProviderCall): Promise<boolean> =>
    send("StartTranscriptionJob", call, async (abortSignal) => {
      try {
        await client.send(
          new StartTranscriptionJobCommand({
            TranscriptionJobName: name,
            Media: { MediaFileUri: `s3://${bucket}/${blobKey(audio.appId, audio.cid)}` },
            MediaFormat: mediaFormats[audio.mimeType],
            ...(pinned ? { LanguageCode: pinned as LanguageCode } : { IdentifyLanguage: true }),
            Settings: { ShowSpeakerLabels: true, MaxSpeakerLabels: maxSpeakers },
          }),
          { abortSignal },
        );
        return true;
      } catch (error) {
        // Started by an earlier attempt: the name is the blob's, so that job is this one.
        if ((error as { name?: string }).name !== "ConflictException") throw error;
        return false;
      }
    });

  const remove = (name: string, call: ProviderCall) =>
    send("DeleteTranscriptionJob", call, async (abortSignal) => {
      try {
        await client.send(new DeleteTranscriptionJobCommand({ TranscriptionJobName: name }), { abortSignal });
      } catch (error) {
        // Transcribe's answer for a job that is no longer there (another attempt deleted it first).
        if ((error as { name?: string }).name !== "BadRequestException") throw error;
      }
    });

  const get = (name: string, call: ProviderCall) =>
    send("GetTranscriptionJob", call, async (abortSignal) => {
      const { TranscriptionJob: job } = await client.send(new GetTranscriptionJobCommand({ TranscriptionJobName: name }), { abortSignal });
      if (!job) throw new ProviderError("fail", "aws-transcribe GetTranscriptionJob: malformed answer");
      return job;
    });

  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });

  return {
    name: "aws-transcribe",
    ...(pinned && { model: pinned }),
    async transcribe(audio, call) {
      if (pinned && !languageCode.test(pinned)) throw new ProviderError("fail", `aws-transcribe: model "${pinned}" is not a Transcribe language code`);
      const name = transcriptionJobName(audio, pinned);
      const startedNow = await start(audio, name, call);
      let job: TranscriptionJob = await get(name, call);
      if (!startedNow && job.TranscriptionJobStatus === "FAILED") {
        // An earlier attempt's failure: one more job. A job this call started that fails is the stage's failure.
        await remove(name, call);
        await start(audio, name, call);
        job = await get(name, call);
      }
      while (job.TranscriptionJobStatus === "QUEUED" || job.TranscriptionJobStatus === "IN_PROGRESS") {
        // Not enough time for another look and the read of the output: let the queue come back for it.
        // On the last attempt that is the stage's timeout: the provider did not answer in time.
        if (call.deadline - Date.now() < pollMs * 2) throw new ProviderError("retry", `aws-transcribe: job ${name} still running at the deadline`, "timeout");
        await sleep(pollMs, call.signal);
        job = await get(name, call);
      }
      if (job.TranscriptionJobStatus !== "COMPLETED") {
        throw new ProviderError("fail", `aws-transcribe: job ${name} ${job.TranscriptionJobStatus ?? "in an unknown state"}`);
      }
      const uri = job.Transcript?.TranscriptFileUri;
      if (!uri) throw new ProviderError("fail", "aws-transcribe: completed job without a transcript file");
      const response = await providerFetch("aws-transcribe transcript", uri, { method: "GET" }, call, options.fetch);
      const output = await readJson("aws-transcribe transcript", response, call);
      if (output === undefined) throw new ProviderError("fail", "aws-transcribe: malformed transcript output");
      const parsed = parseTranscribeOutput(output);
      const lang = languageTag(parsed.lang ?? job.LanguageCode);
      return {
        text: parsed.text,
        ...(lang && { lang }),
        ...(pinned && { model: pinned }),
        ...(parsed.segments.length > 0 && { segments: parsed.segments }),
      };
    },
  };
}
