import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signPlaybackUrl, unixSeconds } from "../core/audio/playback-url";
import { audioFixture } from "./support/audio-fixtures";
import { multipartBody } from "./support/multipart-body";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

describe.each(edgeMatrix)("playback URL expiry over $name", ({ driver, sql }) => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
    const { body, contentType } = await multipartBody([{ name: "file", bytes: (await audioFixture("audio/wav")).bytes, type: "audio/wav" }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor: "exp-1", body, headers: { "content-type": contentType } });
    key = `blobs/alpha/${uploaded.json.data.blob.ref.$link}`;
  });
  afterAll(() => svc?.close());

  const play = (url: string) => svc.get(url.slice(svc.baseUrl.length), { token: null });
  const sign = (aheadSeconds?: number) => {
    const now = new Date();
    const exp = aheadSeconds === undefined ? undefined : unixSeconds(now) + aheadSeconds;
    return signPlaybackUrl({ baseUrl: svc.baseUrl, key, secret: svc.deps.config.playbackSigningKey!, now, exp });
  };

  it("a playback URL has exactly one valid spelling: exp with leading zeros is 403 FORBIDDEN", async () => {
    const url = sign();
    expect((await play(url)).status).toBe(200);
    for (const spelling of ["0", "00", "000000"]) {
      const res = await play(url.replace("&exp=", `&exp=${spelling}`));
      expect(res.status, spelling).toBe(403);
      expect(res.json.error.code).toBe("FORBIDDEN");
    }
    expect((await play(url.replace(/&exp=(\d+)/, "&exp=+$1"))).status).toBe(403);
  });

  it("an exp further ahead than the longest lifetime issued (an hour and a 15-minute step) is 403 FORBIDDEN, even when correctly signed", async () => {
    const tenYears = sign(10 * 365 * 24 * 3600);
    const res = await play(tenYears);
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("FORBIDDEN");
    expect((await play(sign(2 * 3600))).status).toBe(403);
    expect((await play(sign(3600 + 900))).status).toBe(200);
    expect((await play(sign())).status).toBe(200);
  });
});
