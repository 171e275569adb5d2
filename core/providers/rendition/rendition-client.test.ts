/** The rendition adapters' failure mapping against a local server speaking the rendition service's envelope. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawCid } from "../../blobs/raw-cid";
import { type AudioRef, ProviderError } from "../provider-port";
import { createRenditionClient } from "./rendition-client";
import { createRenditionNormalizer } from "./rendition-normalizer";
import { createRenditionTrimmer } from "./rendition-trimmer";
import { createRenditionWaveformMaker } from "./rendition-waveform";
import { createRnnoiseDenoiser } from "./rnnoise-denoiser";

const token = "client-test-token-000000000000000000000000";
let answer: (path: string) => { status: number; body?: unknown; headers?: Record<string, string>; hang?: boolean; cut?: boolean };
const seen: { path: string; auth?: string; body: string }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    seen.push({ path: req.url!, auth: req.headers.authorization, body });
    const a = answer(req.url!);
    if (a.hang) return; // never answers: the caller's deadline ends the call
    if (a.cut) {
      // The status and half the promised body, then the connection drops.
      res.writeHead(a.status, { "Content-Type": "application/json", "Content-Length": "1000" });
      res.write('{"success":true,"data":{"ci');
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers });
    res.end(a.body === undefined ? "" : typeof a.body === "string" ? a.body : JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

const audio: AudioRef = { appId: "demo", cid: rawCid(Buffer.from("a")), mimeType: "audio/webm", size: 10, durationMs: 4000 };
const output = { cid: rawCid(Buffer.from("b")), mimeType: "audio/webm", size: 7, durationMs: 2300 };
const call = (ms = 5000) => ({ signal: new AbortController().signal, deadline: Date.now() + ms });
const client = () => createRenditionClient({ baseUrl: base, token });

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  expect((error as Error).message).not.toContain(token);
  return error as ProviderError;
};

describe("rendition adapters", () => {
  it("the trimmer posts { appId, cid, mimeType } with the bearer token and returns the variant", async () => {
    answer = () => ({ status: 200, body: { success: true, data: output } });
    const trimmed = await createRenditionTrimmer(client()).trim(audio, call());
    expect(trimmed).toEqual({ appId: "demo", ...output });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ path: "/v1/trim", auth: `Bearer ${token}` });
    expect(JSON.parse(last.body)).toEqual({ appId: "demo", cid: audio.cid, mimeType: "audio/webm" });
  });

  it("the trimmer asks for its output's loudness only when normalize follows in the pass", async () => {
    answer = () => ({ status: 200, body: { success: true, data: output } });
    const trimmer = createRenditionTrimmer(client());
    await trimmer.trim(audio, { ...call(), then: ["normalize", "waveform"] });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ appId: "demo", cid: audio.cid, mimeType: "audio/webm", measureOutput: true });
    await trimmer.trim(audio, { ...call(), then: ["transcribe", "waveform"] });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ appId: "demo", cid: audio.cid, mimeType: "audio/webm" });
  });

  it("the rnnoise denoiser calls /v1/denoise; the waveform maker /v1/waveform", async () => {
    answer = (path) =>
      path === "/v1/denoise"
        ? { status: 200, body: { success: true, data: output } }
        : { status: 200, body: { success: true, data: { version: 2, channels: 1, sample_rate: 8000, samples_per_pixel: 400, bits: 8, length: 2, data: [-1, 1, -2, 2] } } };
    expect((await createRnnoiseDenoiser(client()).denoise(audio, call())).cid).toBe(output.cid);
    expect((await createRenditionWaveformMaker(client()).waveform(audio, call())).length).toBe(2);
  });

  it("the normalizer calls /v1/normalize and returns the variant with its loudness and the input's", async () => {
    const loudness = { integratedLufs: -16, truePeakDbtp: -1.4, rangeLu: 3.2, before: { integratedLufs: -31.5, truePeakDbtp: -12, rangeLu: 3.1 } };
    answer = () => ({ status: 200, body: { success: true, data: { ...output, loudness } } });
    expect(await createRenditionNormalizer(client()).normalize(audio, call())).toEqual({ audio: { appId: "demo", ...output }, loudness });
    expect(seen.at(-1)!.path).toBe("/v1/normalize");
    const silent = { integratedLufs: null, truePeakDbtp: null, rangeLu: null };
    answer = () => ({ status: 200, body: { success: true, data: { ...output, loudness: { ...silent, before: silent } } } });
    expect((await createRenditionNormalizer(client()).normalize(audio, call())).loudness.before).toEqual(silent);
  });

  it("a normalize answer without loudness figures, or with a figure that is not a number or null, fails", async () => {
    const figures = { integratedLufs: -16, truePeakDbtp: -1.4, rangeLu: 3.2 };
    for (const loudness of [undefined, figures, { ...figures, before: { ...figures, rangeLu: "3" } }, { ...figures, truePeakDbtp: "-inf", before: figures }]) {
      answer = () => ({ status: 200, body: { success: true, data: { ...output, loudness } } });
      expect((await failure(createRenditionNormalizer(client()).normalize(audio, call()))).disposition).toBe("fail");
    }
  });

  it.each([
    [429, "retry"],
    [500, "retry"],
    [502, "retry"],
    [503, "retry"],
    [400, "fail"],
    [401, "fail"],
    [404, "fail"],
  ] as const)("HTTP %i is %s", async (status, disposition) => {
    answer = () => ({ status, body: { success: false, error: { code: "X", message: "m" }, requestId: "r" } });
    expect((await failure(createRenditionTrimmer(client()).trim(audio, call()))).disposition).toBe(disposition);
  });

  it("an upstream error code goes into the (logged) message only when it is a code, never an echo of the request's headers", async () => {
    answer = () => ({ status: 502, body: { success: false, error: { code: "RENDER_FAILED", message: "m" } } });
    expect((await failure(createRenditionTrimmer(client()).trim(audio, call()))).message).toBe("rendition trim: HTTP 502 RENDER_FAILED");
    for (const code of [`Authorization: Bearer ${token}`, "A".repeat(41), "lower_case", ""]) {
      answer = () => ({ status: 502, body: { success: false, error: { code, message: "m" } } });
      expect((await failure(createRenditionTrimmer(client()).trim(audio, call()))).message).toBe("rendition trim: HTTP 502");
    }
  });

  it("a redirect is not followed and fails", async () => {
    answer = () => ({ status: 307, headers: { Location: `${base}/v1/trim-elsewhere` } });
    const before = seen.length;
    expect((await failure(createRenditionTrimmer(client()).trim(audio, call()))).disposition).toBe("fail");
    expect(seen.length).toBe(before + 1);
  });

  it("a timeout (the call's deadline) and a network error are retried", async () => {
    answer = () => ({ status: 200, hang: true });
    const slow = await failure(createRenditionTrimmer(client()).trim(audio, call(100)));
    expect(slow).toMatchObject({ disposition: "retry", reason: "timeout" });
    const down = await failure(createRenditionTrimmer(createRenditionClient({ baseUrl: "http://127.0.0.1:9", token })).trim(audio, call()));
    expect(down.disposition).toBe("retry");
  });

  it("an answer cut short after its 200 is a network error, retried, not a malformed answer", async () => {
    answer = () => ({ status: 200, cut: true });
    expect((await failure(createRenditionTrimmer(client()).trim(audio, call()))).disposition).toBe("retry");
  });

  it("a malformed answer fails", async () => {
    for (const body of ["not json", { success: true }, { success: true, data: { ...output, mimeType: "audio/wav" } }, { success: true, data: { ...output, cid: "x" } }]) {
      answer = () => ({ status: 200, body });
      expect((await failure(createRenditionTrimmer(client()).trim(audio, call()))).disposition).toBe("fail");
    }
    answer = () => ({ status: 200, body: { success: true, data: { version: 2, channels: 1, sample_rate: 8000, samples_per_pixel: 400, bits: 8, length: 3, data: [1] } } });
    expect((await failure(createRenditionWaveformMaker(client()).waveform(audio, call()))).disposition).toBe("fail");
  });
});
