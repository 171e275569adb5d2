import { describe, expect, it } from "vitest";
import { rawCid } from "./raw-cid";
import { blobKey, parseBlobKey, renditionKey } from "./blob-key";

const cid = rawCid(Buffer.from("audio"));

describe("blob keys", () => {
  it("blobs live at blobs/<appId>/<cid> and renditions at renditions/<appId>/<cid>.<format>", () => {
    expect(blobKey("alpha", cid)).toBe(`blobs/alpha/${cid}`);
    expect(parseBlobKey(`blobs/alpha/${cid}`)).toEqual({ key: `blobs/alpha/${cid}`, appId: "alpha", cid });
    expect(renditionKey(`blobs/alpha/${cid}`, "mp3")).toBe(`renditions/alpha/${cid}.mp3`);
  });

  it("a path outside blobs/, with .., or with a malformed tenant or CID is not a blob key", () => {
    for (const path of [
      `renditions/alpha/${cid}`,
      `blobs/../${cid}`,
      `blobs/alpha/../${cid}`,
      `blobs/alpha/${cid}/..`,
      `blobs/..alpha/${cid}`,
      `blobs/al pha/${cid}`,
      `blobs/${"a".repeat(32)}/${cid}`,
      `blobs/alpha/${cid.toUpperCase()}`,
      `blobs/alpha/${cid}.mp3`,
      `/blobs/alpha/${cid}`,
      `blobs/alpha`,
      "blobs/../x",
    ]) {
      expect(parseBlobKey(path), path).toBeUndefined();
    }
  });
});
