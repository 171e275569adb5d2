import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { DomainError } from "../domain-error";
import { multipartRequest } from "../../test/support/multipart-request";
import { maxUploadBytes } from "../records/accepted-types";
import { firstPartContentType } from "./first-part-content-type";
import { readMultipartFile } from "./read-multipart-file";

const collect = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const audio = Buffer.from("pretend audio bytes");

describe("reading the multipart file part", () => {
  it("streams the single `file` part with its Content-Type exactly as sent, parameters included", async () => {
    for (const contentType of ["audio/wav", "audio/webm;codecs=opus", "AUDIO/WAV", "audio/ogg; codecs=vorbis"]) {
      const request = multipartRequest([{ name: "file", filename: "a.bin", contentType, data: audio }]);
      const file = await readMultipartFile(request);
      expect(file.mimeType).toBe(contentType);
      expect(file.filename).toBe("a.bin");
      expect(await collect(file.stream)).toEqual(audio);
    }
  });

  it("the part named `file` is the upload with no filename, or an empty one: RFC 7578 makes it optional", async () => {
    for (const filename of [undefined, ""]) {
      const file = await readMultipartFile(multipartRequest([{ name: "file", filename, contentType: "audio/wav", data: audio }]));
      expect(file.mimeType).toBe("audio/wav");
      expect(await collect(file.stream)).toEqual(audio);
    }
  });

  it("a part without Content-Type gives an empty type (refused later as unsupported)", async () => {
    const file = await readMultipartFile(multipartRequest([{ name: "file", filename: "a", data: audio }]));
    expect(file.mimeType).toBe("");
  });

  it("a missing `file` field is VALIDATION_ERROR", async () => {
    await expect(readMultipartFile(multipartRequest([]))).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    await expect(
      readMultipartFile(multipartRequest([{ name: "audio", filename: "a.wav", contentType: "audio/wav", data: audio }])),
    ).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("a body whose only part is no form-data part (no Content-Disposition, or `attachment`) is VALIDATION_ERROR at once, at any size and however the body arrives", async () => {
    // The parser skips such a part; one past its 16 KiB buffer, at the end of the body, never let it finish.
    const boundary = "XyZ";
    const bodyOf = (headers: string, size: number) =>
      Buffer.concat([Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.alloc(size, 7), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    // A socket's body: each piece a later packet, and its end only once it is read.
    const paced = (pieces: Buffer[]) =>
      Readable.from(
        (async function* () {
          for (const piece of pieces) {
            yield piece;
            await sleep(2);
          }
        })(),
      );
    for (const headers of ["Content-Type: audio/wav", 'Content-Disposition: attachment; name="file"\r\nContent-Type: audio/wav']) {
      for (const size of [100, 17_000, 100_000]) {
        for (const chunk of [4096, 19_900, 65_536, 1 << 20]) {
          for (const [how, bodyStream] of [["at once", Readable.from], ["paced", paced]] as const) {
            const body = bodyOf(headers, size);
            const pieces = Array.from({ length: Math.ceil(body.length / chunk) }, (_, i) => body.subarray(i * chunk, (i + 1) * chunk));
            const request = { method: "POST", path: "/", query: {}, params: {}, headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body: () => bodyStream(pieces) };
            const answer = readMultipartFile(request as never).then(() => "a file", (error: DomainError) => error.code);
            expect(await Promise.race([answer, sleep(1000, "no answer")]), `${headers}, ${size} bytes in pieces of ${chunk}, ${how}`).toBe("VALIDATION_ERROR");
          }
        }
      }
    }
  });

  it("a file part that does not begin within the body's first 80 KiB is VALIDATION_ERROR once that much is read, not after the whole body", async () => {
    const preamble = Buffer.alloc(3 << 20, "p");
    const request = multipartRequest([{ name: "file", filename: "a.wav", contentType: "audio/wav", data: audio }]);
    let preambleRead = 0;
    const body = Readable.from(
      (async function* () {
        for (let at = 0; at < preamble.length; at += 65_536) {
          preambleRead = at + 65_536;
          yield preamble.subarray(at, at + 65_536);
        }
        yield Buffer.from("\r\n");
        yield* request.body();
      })(),
    );
    const read = readMultipartFile({ ...request, body: () => body });
    await expect(read).rejects.toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("first 80 KiB") });
    expect(preambleRead).toBeLessThan(1 << 20);
  });

  it("a file part with a filename but no name is the missing `file` field, its issue's path naming it", async () => {
    const boundary = "XyZ";
    const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nbytes\r\n--${boundary}--\r\n`);
    const request = { method: "POST", path: "/", query: {}, params: {}, headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body: () => Readable.from([body]) };
    await expect(readMultipartFile(request as never)).rejects.toMatchObject({ code: "VALIDATION_ERROR", issues: [{ path: ["file"], message: "Required" }] });
  });

  it("a non-file field is VALIDATION_ERROR, before or after the file", async () => {
    await expect(
      readMultipartFile(multipartRequest([{ name: "note", data: Buffer.from("hi") }, { name: "file", filename: "a.wav", contentType: "audio/wav", data: audio }])),
    ).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    const file = await readMultipartFile(
      multipartRequest([{ name: "file", filename: "a.wav", contentType: "audio/wav", data: audio }, { name: "note", data: Buffer.from("hi") }]),
    );
    await expect(collect(file.stream)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("two parts (a second file) are VALIDATION_ERROR: the file stream fails instead of ending", async () => {
    const part = { name: "file", filename: "a.wav", contentType: "audio/wav", data: audio };
    const file = await readMultipartFile(multipartRequest([part, part]));
    await expect(collect(file.stream)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("a body that is not multipart/form-data is VALIDATION_ERROR", async () => {
    const request = multipartRequest([{ name: "file", filename: "a", data: audio }], { contentType: "application/octet-stream" });
    await expect(readMultipartFile(request)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    const noBoundary = multipartRequest([{ name: "file", filename: "a", data: audio }], { contentType: "multipart/form-data" });
    await expect(readMultipartFile(noBoundary)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("25 MiB + 1 byte is FILE_TOO_LARGE while streaming, and the body is read no further", async () => {
    const request = multipartRequest([{ name: "file", filename: "big.wav", contentType: "audio/wav", data: { size: 4 * maxUploadBytes } }]);
    const file = await readMultipartFile(request);
    let received = 0;
    await expect(
      (async () => {
        for await (const chunk of file.stream) received += (chunk as Buffer).length;
      })(),
    ).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
    expect(received).toBeLessThanOrEqual(maxUploadBytes + 1);
    // Nothing reads the body any more: it is unpiped and paused, so what was read is all that ever will be.
    expect(request.body().readableFlowing).toBe(false);
    expect(request.body().listenerCount("data")).toBe(0);
    expect(request.bytesRead()).toBeLessThan(maxUploadBytes + 1024 * 1024);
  });

  describe("however the body arrives (each piece a later packet, the file read at once or slowly)", () => {
    const boundary = "XyZ";
    const data = Buffer.alloc(3000, 7);
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
    const bodyOf = (tail: string) => Buffer.concat([Buffer.from(head), data, Buffer.from(tail)]);
    const close = `\r\n--${boundary}--`;

    /** "whole", "wrong bytes", the refusal's code, or "no answer" within a second. */
    const outcome = async (pieces: Buffer[], readPause: number) => {
      const body = Readable.from(
        (async function* () {
          for (const piece of pieces) {
            yield piece;
            await sleep(2);
          }
        })(),
      );
      const request = { method: "POST", path: "/", query: {}, params: {}, headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body: () => body };
      const read = async () => {
        try {
          const file = await readMultipartFile(request as never);
          const chunks: Buffer[] = [];
          for await (const chunk of file.stream) {
            chunks.push(chunk as Buffer);
            if (readPause) await sleep(readPause);
          }
          return Buffer.concat(chunks).equals(data) ? "whole" : "wrong bytes";
        } catch (error) {
          return (error as DomainError).code;
        }
      };
      return Promise.race([read(), sleep(1000, "no answer")]);
    };
    /** The body in two pieces, cut at each of the last `span` + 1 places. */
    const cuts = (body: Buffer, span: number) => Array.from({ length: span + 1 }, (_, i) => body.length - i);

    it("an epilogue after the close delimiter, even the last CRLF alone in a later packet, is ignored: the file ends whole", async () => {
      // The parser ends itself at the close delimiter and never called back for bytes after it: no answer at all.
      for (const readPause of [0, 10]) {
        for (const tail of [close, `${close}\r\n`, `${close}\r\nan epilogue\r\n`]) {
          const body = bodyOf(tail);
          for (const cut of cuts(body, tail.length + 2)) {
            const pieces = [body.subarray(0, cut), body.subarray(cut)].filter((piece) => piece.length > 0);
            expect(await outcome(pieces, readPause), `${JSON.stringify(tail)} cut ${body.length - cut} from the end`).toBe("whole");
          }
        }
      }
    });

    it("an epilogue of up to 64 KiB in later packets, after the parser has ended itself at the close delimiter, is ignored; a longer one is VALIDATION_ERROR, not buffered without end", async () => {
      const body = bodyOf(`${close}\r\n`);
      const packets = (size: number) => [body, ...Array.from({ length: Math.ceil(size / 4096) }, (_, i) => Buffer.alloc(Math.min(4096, size - i * 4096), "e"))];
      for (const readPause of [0, 10]) {
        expect(await outcome(packets(40_000), readPause)).toBe("whole");
        expect(await outcome(packets(64 * 1024), readPause)).toBe("whole");
        expect(await outcome(packets(64 * 1024 + 1), readPause)).toBe("VALIDATION_ERROR");
      }
    });

    it("an epilogue is counted from the close delimiter however it arrives: 64 KiB is ignored and one byte more refused, in the file's own packet too (a Lambda body is one piece)", async () => {
      const body = bodyOf(`${close}\r\n`);
      const epilogue = (size: number) => Buffer.alloc(size, "e");
      for (const readPause of [0, 10]) {
        for (const size of [64 * 1024, 64 * 1024 + 1, 1 << 20]) {
          const whole = Buffer.concat([body, epilogue(size)]);
          const expected = size <= 64 * 1024 ? "whole" : "VALIDATION_ERROR";
          expect(await outcome([whole], readPause), `${size} bytes in one piece`).toBe(expected);
          const mid = body.length + 1000;
          expect(await outcome([whole.subarray(0, mid), whole.subarray(mid)], readPause), `${size} bytes cut inside the epilogue`).toBe(expected);
        }
      }
    });

    it("a preamble past the Content-Type reader's window does not lift the epilogue's limit: 1 MiB after the file is VALIDATION_ERROR", async () => {
      const whole = Buffer.concat([Buffer.alloc(70_000, "p"), Buffer.from("\r\n"), bodyOf(`${close}\r\n`), Buffer.alloc(1 << 20, "e")]);
      const pieces = Array.from({ length: Math.ceil(whole.length / 4096) }, (_, i) => whole.subarray(i * 4096, (i + 1) * 4096));
      expect(await outcome(pieces, 0)).toBe("VALIDATION_ERROR");
    });

    it("a body cut short before its close delimiter is VALIDATION_ERROR, wherever it is cut", async () => {
      for (const readPause of [0, 10]) {
        const body = bodyOf(close);
        for (const cut of cuts(body, close.length + 2).slice(1)) {
          expect(await outcome([body.subarray(0, cut)], readPause), `cut ${body.length - cut} from the end`).toBe("VALIDATION_ERROR");
        }
      }
    });

    it("a second part in a later packet is VALIDATION_ERROR, wherever the packets split", async () => {
      const second = `\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi${close}\r\n`;
      for (const readPause of [0, 10]) {
        const body = bodyOf(`\r\n--${boundary}${second}`);
        for (const cut of cuts(body, second.length + boundary.length + 4).filter((cut) => cut < body.length)) {
          expect(await outcome([body.subarray(0, cut), body.subarray(cut)], readPause), `cut ${body.length - cut} from the end`).toBe("VALIDATION_ERROR");
        }
      }
    });
  });

  it("exactly 25 MiB passes whole", async () => {
    const request = multipartRequest([{ name: "file", filename: "big.wav", contentType: "audio/wav", data: { size: maxUploadBytes } }]);
    const file = await readMultipartFile(request);
    let received = 0;
    for await (const chunk of file.stream) received += (chunk as Buffer).length;
    expect(received).toBe(maxUploadBytes);
  });
});

describe("the first part's raw Content-Type", () => {
  it("is read from the part header as written, after any preamble", () => {
    const head = Buffer.from('preamble\r\n--XYZ\r\nContent-Disposition: form-data; name="file"\r\ncontent-type:  audio/webm;codecs=opus \r\n\r\nbytes');
    expect(firstPartContentType(head, "XYZ")).toBe("audio/webm;codecs=opus");
    expect(firstPartContentType(Buffer.from('--XYZ\r\nContent-Disposition: form-data; name="file"\r\n\r\n'), "XYZ")).toBeNull();
    expect(firstPartContentType(Buffer.from('--XYZ\r\nContent-Disposition: form-data; name="fi'), "XYZ")).toBeUndefined();
  });

  it("is the whole value of a header folded over lines, so a parameter on the next line is not lost", () => {
    const folded = Buffer.from('--XYZ\r\nContent-Type: audio/webm\r\n ;codecs=opus\r\nContent-Disposition: form-data; name="file"\r\n\r\nbytes');
    expect(firstPartContentType(folded, "XYZ")).toBe("audio/webm ;codecs=opus");
  });
});
