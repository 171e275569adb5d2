import { describe, expect, it } from "vitest";
import { audioFixture, videoFixture } from "../../test/support/audio-fixtures";
import { type AcceptedMimeType, acceptedAudioTypes, acceptedMimeTypes } from "../records/accepted-types";
import { assertAudioFamily, sniffAudioFamily, sniffWindowBytes } from "./sniff-audio";

const head = (bytes: Buffer) => bytes.subarray(0, sniffWindowBytes);

describe("sniffing audio by magic numbers", () => {
  it.each(acceptedMimeTypes)("real %s audio sniffs as its declared family", async (mimeType) => {
    const fixture = await audioFixture(mimeType);
    expect(await sniffAudioFamily(head(fixture.bytes))).toBe(acceptedAudioTypes[mimeType]);
    await expect(assertAudioFamily(head(fixture.bytes), mimeType)).resolves.toBeUndefined();
  });

  it("bytes of another family than the declared type are UNSUPPORTED_MEDIA_TYPE", async () => {
    const pairs: [AcceptedMimeType, AcceptedMimeType][] = [
      ["audio/wav", "audio/mpeg"],
      ["audio/mpeg", "audio/ogg"],
      ["audio/ogg", "audio/webm"],
      ["audio/webm", "audio/mp4"],
      ["audio/m4a", "audio/wav"],
    ];
    for (const [actual, declared] of pairs) {
      const fixture = await audioFixture(actual);
      await expect(assertAudioFamily(head(fixture.bytes), declared)).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    }
  });

  it("text is no audio at all", async () => {
    await expect(assertAudioFamily(Buffer.from("hello, I am definitely a WAV file\n".repeat(50)), "audio/wav")).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
    });
    expect(await sniffAudioFamily(Buffer.alloc(0))).toBeUndefined();
  });

  it("a video-only MP4 brand does not count as the MP4 audio family", async () => {
    // ftyp box with major brand M4V: file-type says video/x-m4v.
    const ftyp = Buffer.from("0000001c6674797044345620000000004d345620697363366d703432", "hex");
    ftyp.write("M4V ", 8, "latin1");
    expect(await sniffAudioFamily(ftyp)).toBeUndefined();
    // And real video containers are caught later, by the metadata parser (see ingest-audio.test.ts).
    expect(await sniffAudioFamily(head((await videoFixture("webm")).bytes))).toBe("webm");
  });
});
