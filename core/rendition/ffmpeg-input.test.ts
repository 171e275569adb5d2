import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ffmpeg, makeClip } from "../../test/support/rendition-fixtures";
import { decodeAnalysisPcm } from "./analysis-pcm";
import { unnamedInput } from "./ffmpeg-input";
import { pcmDurationMs } from "./pcm";
import type { RenditionContext } from "./rendition-context";
import { runFfmpeg } from "./run-ffmpeg";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ffmpeg-input-test-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** An ID3v2 tag of `size` bytes of padding: file-type sniffs anything after a tag longer than its window as MP3. */
const id3Tag = (size: number) =>
  Buffer.concat([Buffer.from("ID3\x04\x00\x00", "latin1"), Buffer.from([(size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f]), Buffer.alloc(size)]);

describe("every ffmpeg input is read as its family, never as whatever its bytes claim", () => {
  it("an \"MP3\" that is an ID3 tag, an HLS playlist naming another file, then its own frames decodes as its own frames only", async () => {
    // Another tenant's rendition on the same store: 3 s, which the playlist names.
    const other = join(dir, "other.mp3");
    await writeFile(other, await makeClip("audio/mpeg", { lead: 0, tone: 3, tail: 0, frequency: 880 }));
    const own = await makeClip("audio/mpeg", { lead: 0, tone: 0.5, tail: 0, frequency: 220 });
    const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3.0,\nfile://${other}\n#EXT-X-ENDLIST\n`;
    const crafted = join(dir, "source");
    await writeFile(crafted, Buffer.concat([id3Tag(6000), Buffer.from(playlist), Buffer.alloc(100, 10), own]));

    const context = { ffmpeg } as RenditionContext;
    const pcm = await decodeAnalysisPcm(context, crafted, "audio/mpeg");
    expect(pcmDurationMs(pcm)).toBeGreaterThan(400);
    expect(pcmDurationMs(pcm)).toBeLessThan(700);
  });

  it("runFfmpeg refuses an input that names no demuxer, before ffmpeg starts", async () => {
    await expect(runFfmpeg(ffmpeg, ["-i", join(dir, "anything"), "-f", "null", "-"])).rejects.toThrow("names no demuxer");
  });

  it("unnamedInput finds each input's -f among its own options", () => {
    expect(unnamedInput(["-f", "mp3", "-i", "a", "-f", "null", "-"])).toBeUndefined();
    expect(unnamedInput(["-f", "f32le", "-ar", "48000", "-i", "pipe:0", "-c:a", "libopus", "out.webm"])).toBeUndefined();
    expect(unnamedInput(["-i", "a", "-f", "wav", "pipe:1"])).toBe("a");
    // A second input's options start after the first input: the first's -f does not name it.
    expect(unnamedInput(["-f", "mp3", "-i", "a", "-i", "b", "-f", "null", "-"])).toBe("b");
  });
});
