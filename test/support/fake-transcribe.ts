/**
 * A local stand-in for Amazon Transcribe speaking its AWS JSON 1.1 protocol (`X-Amz-Target:
 * Transcribe.StartTranscriptionJob` / `GetTranscriptionJob` / `DeleteTranscriptionJob`, errors as `{ __type, Message }` with
 * `x-amzn-ErrorType`), and serving each completed job's transcript file, whose item times are strings and whose
 * punctuation has none.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeJob {
  name: string;
  request: Record<string, any>;
  gets: number;
  /** The job ends FAILED instead of COMPLETED. */
  fails?: boolean;
}

export type Forced = { status: number; type?: string; body?: unknown; delayMs?: number };

/**
 * The same conversation as Transcribe's documentation shows its output: pronunciation items with string times, a
 * string confidence and, when the job asked for speaker labels, `speaker_label` (one item lacks it, as items that
 * match a custom vocabulary do: `speaker_labels.segments` still cover it); punctuation items without times; the
 * identified `language_code` when the job asked to identify it.
 */
const sampleItems = [
  ["pronunciation", "Hello", "0.1", "0.5", "spk_0"],
  ["pronunciation", "there", "0.6", "0.9", "spk_0"],
  ["punctuation", ","],
  ["pronunciation", "how", "0.95", "1.1", "spk_0"],
  ["pronunciation", "are", "1.15", "1.3", "spk_0"],
  ["pronunciation", "you", "1.35", "1.6", "spk_0"],
  ["punctuation", "?"],
  ["pronunciation", "I'm", "2.3", "2.5", "spk_1"],
  ["pronunciation", "fine", "2.55", "2.8", "spk_1"],
  ["pronunciation", "thanks", "2.85", "3.2"],
  ["pronunciation", "Good", "3.4", "3.8", "spk_0"],
  ["punctuation", "."],
] as const;

export const sampleTranscribeOutput = (job: FakeJob) => {
  const labels = job.request.Settings?.ShowSpeakerLabels === true;
  const identify = job.request.IdentifyLanguage === true;
  return {
    jobName: job.name,
    accountId: "123456789012",
    status: "COMPLETED",
    results: {
      ...(identify && {
        language_code: "en-US",
        language_identification: [
          { score: "0.9712", code: "en-US" },
          { score: "0.0188", code: "en-GB" },
        ],
      }),
      transcripts: [{ transcript: "Hello there, how are you? I'm fine thanks Good." }],
      ...(labels && {
        speaker_labels: {
          channel_label: "ch_0",
          speakers: 2,
          segments: [
            ["0.1", "1.6", "spk_0"],
            ["2.3", "3.2", "spk_1"],
            ["3.4", "3.8", "spk_0"],
          ].map(([start, end, speaker_label]) => ({
            start_time: start,
            end_time: end,
            speaker_label,
            items: sampleItems
              .filter((i) => i[0] === "pronunciation" && Number(i[2]) >= Number(start) && Number(i[3]) <= Number(end!))
              .map((i) => ({ start_time: i[2], end_time: i[3], speaker_label })),
          })),
        },
      }),
      items: sampleItems.map(([type, content, start_time, end_time, speaker], id) =>
        type === "punctuation"
          ? { id, type, alternatives: [{ confidence: "0.0", content }] }
          : {
              id,
              type,
              alternatives: [{ confidence: content === "thanks" ? "0.512" : "0.998", content }],
              start_time,
              end_time,
              ...(labels && speaker && { speaker_label: speaker }),
            },
      ),
    },
  };
};

export interface FakeTranscribe {
  url: string;
  jobs: Map<string, FakeJob>;
  /** Forced answers for the next API calls (by order), e.g. a throttling error. */
  forced: Forced[];
  /** Forced answers for the next transcript file downloads. */
  forcedFiles: Forced[];
  /** GetTranscriptionJob calls a job answers IN_PROGRESS before it completes. */
  inProgressGets: number;
  /** Jobs started from now on end FAILED. */
  failNewJobs: boolean;
  targets: string[];
  close(): Promise<void>;
}

export async function startFakeTranscribe(): Promise<FakeTranscribe> {
  const fake = { jobs: new Map<string, FakeJob>(), forced: [] as Forced[], forcedFiles: [] as Forced[], inProgressGets: 1, failNewJobs: false, targets: [] as string[] };
  let url = "";
  const send = (res: any, status: number, body: unknown, type?: string) => {
    res.writeHead(status, { "Content-Type": "application/x-amz-json-1.1", ...(type && { "x-amzn-ErrorType": type }) });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };
  const jobView = (job: FakeJob, status: string) => ({
    TranscriptionJobName: job.name,
    TranscriptionJobStatus: status,
    MediaFormat: job.request.MediaFormat,
    Media: job.request.Media,
    CreationTime: 1_700_000_000,
    ...(job.request.LanguageCode ? { LanguageCode: job.request.LanguageCode } : status === "COMPLETED" ? { LanguageCode: "en-US" } : {}),
    ...(status === "COMPLETED" && { Transcript: { TranscriptFileUri: `${url}/transcripts/${job.name}.json` }, CompletionTime: 1_700_000_010 }),
  });
  const server: Server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method === "GET" && req.url?.startsWith("/transcripts/")) {
      const forced = fake.forcedFiles.shift();
      if (forced?.delayMs) await new Promise((r) => setTimeout(r, forced.delayMs));
      if (forced) return send(res, forced.status, forced.body ?? {});
      const name = decodeURIComponent(req.url.slice("/transcripts/".length).replace(/\.json$/, ""));
      const job = fake.jobs.get(name);
      return job ? send(res, 200, sampleTranscribeOutput(job)) : send(res, 403, "<Error><Code>AccessDenied</Code></Error>");
    }
    const target = String(req.headers["x-amz-target"] ?? "");
    fake.targets.push(target);
    const forced = fake.forced.shift();
    if (forced) {
      if (forced.delayMs) await new Promise((r) => setTimeout(r, forced.delayMs));
      if (res.destroyed) return;
      return send(res, forced.status, forced.body ?? { __type: forced.type, Message: "forced" }, forced.type);
    }
    const body = JSON.parse(raw || "{}");
    if (target === "Transcribe.StartTranscriptionJob") {
      if (!body.TranscriptionJobName || !body.Media?.MediaFileUri?.startsWith("s3://")) {
        return send(res, 400, { __type: "BadRequestException", Message: "1 validation error detected" }, "BadRequestException");
      }
      if (fake.jobs.has(body.TranscriptionJobName)) {
        return send(res, 400, { __type: "ConflictException", Message: "The requested job name already exists. Use a different job name." }, "ConflictException");
      }
      const job = { name: body.TranscriptionJobName, request: body, gets: 0, fails: fake.failNewJobs };
      fake.jobs.set(job.name, job);
      return send(res, 200, { TranscriptionJob: jobView(job, "QUEUED") });
    }
    if (target === "Transcribe.GetTranscriptionJob") {
      const job = fake.jobs.get(body.TranscriptionJobName);
      if (!job) return send(res, 400, { __type: "BadRequestException", Message: "The requested job couldn't be found." }, "BadRequestException");
      job.gets++;
      const ended = job.fails ? "FAILED" : "COMPLETED";
      return send(res, 200, { TranscriptionJob: jobView(job, job.gets > fake.inProgressGets ? ended : "IN_PROGRESS") });
    }
    if (target === "Transcribe.DeleteTranscriptionJob") {
      const job = fake.jobs.get(body.TranscriptionJobName);
      if (!job) return send(res, 400, { __type: "BadRequestException", Message: "The requested job couldn't be found." }, "BadRequestException");
      fake.jobs.delete(job.name);
      return send(res, 200, {});
    }
    send(res, 400, { __type: "UnknownOperationException" }, "UnknownOperationException");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(fake, {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
