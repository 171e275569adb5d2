/** The embed view's loudness (docs/decisions.md#loudness): shown once `normalize` is ready, and only then. */
import { describe, expect, it } from "vitest";
import type { StageStatus } from "../processing/stage-state";
import type { PostRow } from "./post-row";
import { toPostView, type Projection } from "./post-view";

const loudness = {
  integratedLufs: -16,
  truePeakDbtp: -1.5,
  rangeLu: 4.2,
  before: { integratedLufs: -31.2, truePeakDbtp: -9.8, rangeLu: 4.1 },
};

const projection: Projection = { appId: "alpha", did: "did:web:alpha.test", actor: undefined, playbackUrl: (key) => `https://svc.test/${key}` };

const row = (normalize: StageStatus): PostRow => ({
  rkey: "3kabcdefghijk",
  record: {
    $type: "dev.svc.audio.post",
    text: "",
    createdAt: "2026-01-01T00:00:00.000Z",
    embed: { $type: "dev.svc.embed.audio", audio: { $type: "blob", ref: { $link: "bafkreiupload" }, mimeType: "audio/wav", size: 100 } },
  } as PostRow["record"],
  cid: "bafyreipost",
  authorId: "alice",
  authorDid: null,
  kind: "prompt",
  rootAuthorId: null,
  branchAuthorId: null,
  durationMs: 1000,
  processing: { normalize: { status: normalize, updatedAt: "2026-01-01T00:00:01.000Z" } },
  variant: { cid: "bafkreinormalized", mimeType: "audio/wav", size: 100, durationMs: 1000 },
  transcript: null,
  waveform: null,
  loudness,
});

describe("embed.loudness", () => {
  it("is the figures of the served bytes and of the bytes before once normalize is ready", () => {
    expect(toPostView(row("ready"), projection).embed).toMatchObject({ url: "https://svc.test/blobs/alpha/bafkreinormalized", loudness });
  });

  it.each(["pending", "failed", "skipped"] as const)("is absent while normalize is %s, though figures are stored", (status) => {
    expect(toPostView(row(status), projection).embed).not.toHaveProperty("loudness");
  });
});
