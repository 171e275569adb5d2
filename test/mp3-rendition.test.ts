/** `GET /api/v1/audio?format=mp3` (docs/decisions.md#playback-and-upload and docs/decisions.md#rendition-service), with the real rendition service. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signPlaybackUrl } from "../core/audio/playback-url";
import { renditionKey } from "../core/blobs/blob-key";
import type { BlobStore } from "../core/blobs/blob-store";
import { createFsBlobStore } from "../core/blobs/fs-blob-store";
import { createLogger } from "../core/observability/logger";
import { renditionsFor } from "../core/providers/rendition/mp3-rendition-builder";
import { parseRenditionConfig } from "../core/rendition/rendition-config";
import { type RunningRendition, startRendition } from "../core/rendition/rendition-node-root";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { decodeSamples, makeClip } from "./support/rendition-fixtures";
import { startTestService, type TestService } from "./support/test-service";

const renditionToken = "mp3-rendition-token-00000000000000000000000";
const logger = createLogger("silent");

describe.each(backends)("mp3 renditions on $name", (backend) => {
  let withService: TestService;
  let rendition: RunningRendition;
  let renders = 0;
  let dir: string;

  beforeAll(async () => {
    // The rendition service shares the service's blob directory; a counting store tells how many renders ran.
    dir = await mkdtemp(join(tmpdir(), "mp3-rendition-"));
    const fsStore = createFsBlobStore(dir);
    const counting: BlobStore = {
      ...fsStore,
      async writeAtomic(key, source, options) {
        if (key.startsWith("renditions/")) renders++;
        return fsStore.writeAtomic(key, source, options);
      },
    };
    const config = parseRenditionConfig({ SVC_BLOB_DIR: dir, RENDITION_SERVICE_TOKEN: renditionToken, RENDITION_PORT: "0" }, logger);
    rendition = await startRendition(config, logger, { store: counting });
    withService = await startTestService({
      driver: "node",
      sql: backend.open,
      blobs: createFsBlobStore(dir),
      env: { SVC_RENDITION_SERVICE_URL: rendition.url, RENDITION_SERVICE_TOKEN: renditionToken },
    });
  });
  afterAll(async () => {
    await rendition?.close();
    await withService?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const uploadClip = async (svc: TestService, seed: number) => {
    const { body, contentType } = await multipartBody([{ name: "file", bytes: await makeClip("audio/ogg", { lead: 0.5, tone: 1 + seed / 10, tail: 0.5 }), type: "audio/ogg" }]);
    const res = await svc.post("/api/v1/audio/upload", { actor: "u1", body, headers: { "content-type": contentType } });
    expect(res.status).toBe(201);
    return res.json.data.blob as { ref: { $link: string } };
  };
  const mp3Path = (svc: TestService, appId: string, cid: string) =>
    signPlaybackUrl({ baseUrl: svc.baseUrl, key: `blobs/${appId}/${cid}`, secret: svc.deps.config.playbackSigningKey!, now: new Date() }).slice(svc.baseUrl.length) +
    "&format=mp3";

  /** The same service as a deployment without SVC_RENDITION_SERVICE_URL: its composition root wires no builder. */
  const withoutRenditionService = async (test: (svc: TestService) => Promise<void>) => {
    const saved = withService.deps.renditions;
    delete withService.deps.renditions;
    try {
      await test(withService);
    } finally {
      withService.deps.renditions = saved;
    }
  };

  it("without the rendition service a missing mp3 rendition is 404 NOT_FOUND saying that no rendition service is configured", () =>
    withoutRenditionService(async (without) => {
    const blob = await uploadClip(without, 1);
    const res = await without.get(mp3Path(without, "alpha", blob.ref.$link), { token: null });
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ code: "NOT_FOUND", message: "no mp3 rendition of this audio, and no rendition service is configured to build one" });
    }));

  it("without the rendition service an existing mp3 rendition is served", () =>
    withoutRenditionService(async (without) => {
    const blob = await uploadClip(without, 2);
    const mp3 = await makeClip("audio/mpeg");
    const { Readable } = await import("node:stream");
    await without.deps.blobs.writeAtomic(renditionKey(`blobs/alpha/${blob.ref.$link}`, "mp3"), Readable.from([mp3]));
    const res = await without.get(mp3Path(without, "alpha", blob.ref.$link), { token: null });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("audio/mpeg");
    expect(res.body.equals(mp3)).toBe(true);
    }));

  it("with the rendition service two concurrent misses build the rendition once, and both get a playable mp3", async () => {
    renders = 0;
    const blob = await uploadClip(withService, 3);
    const path = mp3Path(withService, "alpha", blob.ref.$link);
    const [a, b] = await Promise.all([withService.get(path, { token: null }), withService.get(path, { token: null })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.headers["content-type"]).toBe("audio/mpeg");
    expect(a.body.equals(b.body)).toBe(true);
    expect(renders).toBe(1);
    const samples = await decodeSamples(a.body);
    expect(Math.abs(samples.length / 48 - 2300)).toBeLessThanOrEqual(100);
    // Served from the store from now on: no third build.
    expect((await withService.get(path, { token: null })).status).toBe(200);
    expect(renders).toBe(1);
  });

  it("a miss while the rendition service is down is 503 SERVICE_UNAVAILABLE, not a 404", async () => {
    const blob = await uploadClip(withService, 4);
    const saved = withService.deps.renditions;
    Object.assign(withService.deps, renditionsFor({ url: "http://127.0.0.1:9", token: renditionToken }));
    try {
      const res = await withService.get(mp3Path(withService, "alpha", blob.ref.$link), { token: null });
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe("SERVICE_UNAVAILABLE");
    } finally {
      withService.deps.renditions = saved;
    }
  });
});
