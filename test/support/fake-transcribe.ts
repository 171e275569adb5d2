/**
 * A local stand-in for Amazon Transcribe speaking its AWS JSON 1.1 protocol (`X-Amz-Target:
 * Transcribe.StartTranscriptionJob` / `Transcribe.GetTranscriptionJob`, errors as `{ __type, Message }` with
 * `x-amzn-ErrorType`), and serving each completed job's transcript file, whose item times are strings and whose
 * punctuation has none.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeJob {
  name: string;
  request: Record<string, any>;
  gets: number;
}

export type Forced = { status: number; type?: string; body?: unknown; delayMs?: number };

export const sampleTranscribeOutput = (jobName: string) => ({
  jobName,
  accountId: "123456789012",
  status: "COMPLETED",
  results: {
    language_code: "en-US",
    transcripts: [{ transcript: "Hello there. This is a test" }],
    items: [
      { id: 0, type: "pronunciation", alternatives: [{ confidence: "0.99", content: "Hello" }], start_time: "0.1", end_time: "0.5" },
      { id: 1, type: "pronunciation", alternatives: [{ confidence: "0.99", content: "there" }], start_time: "0.6", end_time: "1.0" },
      { id: 2, type: "punctuation", alternatives: [{ confidence: "0.0", content: "." }] },
      { id: 3, type: "pronunciation", alternatives: [{ confidence: "0.99", content: "This" }], start_time: "1.5", end_time: "1.7" },
      { id: 4, type: "pronunciation", alternatives: [{ confidence: "0.99", content: "is" }], start_time: "1.75", end_time: "1.9" },
      { id: 5, type: "pronunciation", alternatives: [{ confidence: "0.99", content: "a" }], start_time: "1.95", end_time: "2.0" },
      { id: 6, type: "pronunciation", alternatives: [{ confidence: "0.99", content: "test" }], start_time: "2.05", end_time: "2.4" },
    ],
  },
});

export interface FakeTranscribe {
  url: string;
  jobs: Map<string, FakeJob>;
  /** Forced answers for the next API calls (by order), e.g. a throttling error. */
  forced: Forced[];
  /** Forced answers for the next transcript file downloads. */
  forcedFiles: Forced[];
  /** GetTranscriptionJob calls a job answers IN_PROGRESS before it completes. */
  inProgressGets: number;
  targets: string[];
  close(): Promise<void>;
}

export async function startFakeTranscribe(): Promise<FakeTranscribe> {
  const fake = { jobs: new Map<string, FakeJob>(), forced: [] as Forced[], forcedFiles: [] as Forced[], inProgressGets: 1, targets: [] as string[] };
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
      return fake.jobs.has(name) ? send(res, 200, sampleTranscribeOutput(name)) : send(res, 403, "<Error><Code>AccessDenied</Code></Error>");
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
      const job = { name: body.TranscriptionJobName, request: body, gets: 0 };
      fake.jobs.set(job.name, job);
      return send(res, 200, { TranscriptionJob: jobView(job, "QUEUED") });
    }
    if (target === "Transcribe.GetTranscriptionJob") {
      const job = fake.jobs.get(body.TranscriptionJobName);
      if (!job) return send(res, 400, { __type: "BadRequestException", Message: "The requested job couldn't be found." }, "BadRequestException");
      job.gets++;
      return send(res, 200, { TranscriptionJob: jobView(job, job.gets > fake.inProgressGets ? "COMPLETED" : "IN_PROGRESS") });
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
