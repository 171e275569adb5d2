import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedMimeTypes } from "../core/records/accepted-types";
import { sampleServiceToken, sampleServiceUrl } from "../core/audio/upload-examples";
import { openApiDocument } from "../core/openapi/openapi-document";
import { routeList } from "../functions/routes";
import type { Recording } from "./fixtures/browser-recordings/make-recordings";
import { backends } from "./support/databases";
import { createPost } from "./support/post-bodies";
import { startTestService, type TestService } from "./support/test-service";

const run = promisify(execFile);
const recordings = join(import.meta.dirname, "fixtures/browser-recordings");
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const upload = (openApiDocument(routeList) as any).paths["/api/v1/audio/upload"].post;
const samples: { lang: string; label: string; source: string }[] = upload["x-codeSamples"];

describe("the upload's description", () => {
  it("names the accepted types: an enum on the part's Content-Type, and in the words", () => {
    const multipart = upload.requestBody.content["multipart/form-data"];
    expect(multipart.encoding.file.headers["Content-Type"].schema.enum).toEqual(acceptedMimeTypes);
    expect(multipart.encoding.file.contentType.split(", ")).toEqual(acceptedMimeTypes);
    for (const type of acceptedMimeTypes) {
      expect(upload.description).toContain(`\`${type}\``);
      expect(multipart.schema.properties.file.description).toContain(type);
    }
    expect(upload.description).toContain("audio/webm;codecs=opus");
  });
});

describe("the upload's code samples work", () => {
  it("name the address and the demo tenant's token that npm start serves with local.env", async () => {
    const local = await readFile(join(import.meta.dirname, "../local.env"), "utf8");
    expect(local).toMatch(new RegExp(`^SVC_APP_TOKENS=(.*,)?demo:${sampleServiceToken}(,|$)`, "m"));
    const { hostname, port } = new URL(sampleServiceUrl);
    expect(local).toMatch(new RegExp(`^HOST=${hostname}$`, "m"));
    expect(local).toMatch(new RegExp(`^PORT=${port}$`, "m"));
  });

  let svc: TestService;
  let work: string;
  let recording: Recording;
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: backends[0]!.open });
    work = await mkdtemp(join(tmpdir(), "svc-upload-sample-"));
    const all: Recording[] = JSON.parse(await readFile(join(recordings, "recordings.json"), "utf8"));
    recording = all.find((r) => r.file === "chromium-3s.webm")!;
    await copyFile(join(recordings, recording.file), join(work, "clip.webm"));
  });
  afterAll(async () => {
    await svc?.close();
    await rm(work, { recursive: true, force: true });
  });

  it.each(samples.map((sample) => [sample.label, sample] as const))(
    "%s uploads a Chromium recording as audio/webm, and its post reads ffmpeg's duration within 50 ms",
    async (_, sample) => {
      // As published, pointed at this test's service and tenant.
      const source = sample.source.replaceAll(sampleServiceUrl, svc.baseUrl).replaceAll(sampleServiceToken, svc.tenants.alpha.token);
      expect(source).not.toBe(sample.source);
      const command = sample.lang === "Shell" ? ["sh", ["-c", source]] : ["node", ["--input-type=module", "-e", source]];
      const { stdout } = await run(command[0] as string, command[1] as string[], { cwd: work });
      const answer = JSON.parse(stdout);
      const blob = (answer.data ?? answer).blob;
      expect(blob).toMatchObject({ $type: "blob", mimeType: "audio/webm" });
      const post = (await createPost(svc, "alice", { text: "", embed: { $type: "dev.svc.embed.audio", audio: blob } })) as unknown as { embed: { durationMs: number } };
      expect(Math.abs(post.embed.durationMs - recording.decodedMs)).toBeLessThanOrEqual(50);
    },
  );
});
