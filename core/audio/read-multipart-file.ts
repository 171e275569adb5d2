/** Streams the single `file` part of a multipart/form-data upload without buffering it (@fastify/busboy). */
import { PassThrough, type Readable } from "node:stream";
import { Busboy } from "@fastify/busboy";
import { DomainError, validationError } from "../domain-error";
import type { HttpRequest } from "../http-message/http-message";
import { maxUploadBytes } from "../records/accepted-types";
import { boundaryOf, scanLimitBytes, tapFirstPartContentType } from "./first-part-content-type";
import { fileTooLarge } from "./file-too-large";

export interface MultipartFile {
  /** The part's Content-Type exactly as sent, parameters included ("" when it has none). */
  mimeType: string;
  filename?: string;
  /**
   * The file's bytes. It ends only once the whole body has been parsed and held exactly this one part; a second
   * part, or more than `maxBytes`, destroys it with the DomainError instead, so a consumer never commits such an upload.
   */
  stream: Readable;
}

const onePart = 'expected exactly one part: a file field named "file"';
const missingFile = () => validationError(`missing "file": ${onePart}`, [{ path: ["file"], message: "Required" }]);

/**
 * The part named `file` is the upload whether or not it names a filename (RFC 7578 makes one optional: curl's
 * `-F 'file=<clip.wav'` sends none); any other part is a file by the parser's usual rule, so it is refused by name.
 */
const isPartAFile = (name: string | undefined, contentType: string | undefined, filename: string | undefined) =>
  name === "file" || contentType === "application/octet-stream" || filename !== undefined;

/** What a body may carry after its file part: its close delimiter and an epilogue that is ignored (RFC 2046 §5.1.1). */
const maxTrailingBytes = 64 * 1024;
const tooMuchAfterFile = () => validationError(`more than ${maxTrailingBytes} bytes after the file part: ${onePart}`);

/** Longer part headers are cut off: well inside the 64 KiB the first part's raw Content-Type is looked for in. */
const maxPartHeaderBytes = 16 * 1024;

/** The file part starts within the window its Content-Type is looked for in, with its header, or not at all. */
const maxBytesBeforeFile = scanLimitBytes + maxPartHeaderBytes;
const noFileSoon = () =>
  validationError(`no "file" part begins within the body's first ${maxBytesBeforeFile / 1024} KiB: ${onePart}`, [{ path: ["file"], message: "Required" }]);

/**
 * Resolves when the `file` part starts; rejects with VALIDATION_ERROR for a missing `file`, another field first,
 * or a body that is not multipart. After a failure the body is no longer read (it is unpiped and left paused).
 */
export function readMultipartFile(request: HttpRequest, { maxBytes = maxUploadBytes }: { maxBytes?: number } = {}): Promise<MultipartFile> {
  const contentType = request.headers["content-type"] ?? "";
  const boundary = boundaryOf(contentType);
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !boundary) {
    return Promise.reject(validationError("expected a multipart/form-data body with a boundary"));
  }
  // The parser raises each limit on passing it: a second part, a second file, any field, one byte over maxBytes.
  let parser: Busboy;
  try {
    parser = new Busboy({
      headers: { "content-type": contentType },
      isPartAFile,
      limits: { files: 1, fields: 0, parts: 1, fileSize: maxBytes, headerSize: maxPartHeaderBytes },
    });
  } catch (error) {
    return Promise.reject(validationError(`malformed multipart content type: ${(error as Error).message}`));
  }
  const tap = tapFirstPartContentType(boundary);
  const body = request.body();

  return new Promise<MultipartFile>((resolve, reject) => {
    let out: PassThrough | undefined;
    let failed = false;
    let bodyEnded = false;
    let fileEnded = false;
    // Bytes given to the parser, and bytes of the file part: the epilogue is their difference less the part's header
    // and the close delimiter with its CRLF, however the body was cut into chunks (a Lambda's is one).
    let fed = 0;
    // The parser counts the file part's bytes (`bytesRead`, set as each piece is pushed).
    let filePart: { bytesRead?: number } | undefined;
    let fedAtFileEnd = 0;
    // Without the part's header found (a preamble past the tap's window), the bytes fed after the file part ended:
    // at worst a chunk's worth short of the exact count.
    const bytesAfterFile = () => {
      const dataStart = tap.dataStart();
      return dataStart === undefined ? fed - fedAtFileEnd : fed - (dataStart + (filePart?.bytesRead ?? 0) + `\r\n--${boundary}--\r\n`.length);
    };

    const watch = (chunk: Buffer) => {
      if (tap.watch(chunk)) body.off("data", watch);
    };
    const finish = () => {
      if (failed || !out || out.writableEnded) return;
      if (bytesAfterFile() > maxTrailingBytes) fail(tooMuchAfterFile());
      else out.end();
    };
    // Once the body has ended, the parser has been given every byte, and by the next turn it has reported any second
    // part or a body cut short. It may never finish, though: busboy skips a part that is not form-data, and a skipped
    // last part past its 16 KiB buffer holds it (so a body that ended with no file announced has none); and it ends
    // itself at the close delimiter once the file part is read, then holds any later bytes (an epilogue, or the last
    // CRLF in a packet of its own) without calling back (so `feed` stops waiting for it once the file part ended).
    // So a file part that has ended by then, with neither reported, is the whole upload.
    const settleOnceBodyEnded = () =>
      setImmediate(() => {
        if (!bodyEnded) return;
        if (!out) fail(missingFile());
        else if (fileEnded) finish();
      });
    const fail = (error: DomainError) => {
      if (failed) return;
      failed = true;
      body.off("data", watch);
      body.off("data", feed);
      body.pause();
      if (out) out.destroy(error);
      else reject(error);
    };

    parser.on("file", (name, file, filename) => {
      file.on("error", () => undefined);
      if (failed || out) {
        file.resume();
        return;
      }
      if (name !== "file") {
        file.resume();
        // A file part with no name (a filename alone) names no field: the `file` field is missing.
        fail(name === undefined ? missingFile() : validationError(`unexpected field ${JSON.stringify(name)}: ${onePart}`, [{ path: [name], message: "Unexpected field" }]));
        return;
      }
      out = new PassThrough();
      // The failure may come before the consumer listens (one chunk can hold the file and a second part);
      // consumers still see it, as the stream's `errored` state, through pipeline or async iteration.
      out.on("error", () => undefined);
      file.on("limit", () => fail(fileTooLarge(maxBytes)));
      filePart = file as { bytesRead?: number };
      file.on("end", () => {
        fileEnded = true;
        fedAtFileEnd = fed;
        if (!failed) body.resume();
        settleOnceBodyEnded();
      });
      file.pipe(out, { end: false });
      resolve({ mimeType: tap.contentType() ?? "", filename, stream: out });
    });
    parser.on("fieldsLimit", () => fail(validationError(`unexpected non-file field: ${onePart}`)));
    parser.on("filesLimit", () => fail(validationError(`more than one file: ${onePart}`)));
    parser.on("partsLimit", () => fail(validationError(`more than one part: ${onePart}`)));
    parser.on("error", (error: Error) => fail(validationError(`malformed multipart body: ${error.message}`)));
    body.on("error", (error: Error) => fail(validationError(`request body failed: ${error.message}`)));
    body.on("end", () => {
      bodyEnded = true;
      parser.end();
      settleOnceBodyEnded();
    });
    parser.on("finish", () => {
      if (failed) return;
      if (!out) fail(missingFile());
      else finish();
    });

    // Fed by hand, not piped: the parser's backpressure holds the body while the file part streams, and no longer
    // once it has ended, when what follows is an epilogue (at most `maxTrailingBytes`, held by a parser that never
    // calls back) or a second part (refused as soon as it starts). Nor before the file part: the parser may be
    // holding a part it skips (no form-data part), and drains never, so a paused body would never end and the
    // upload never be answered; the bytes it is given then are bounded by `maxBytesBeforeFile` instead.
    const feed = (chunk: Buffer) => {
      fed += chunk.length;
      if (fileEnded && bytesAfterFile() > maxTrailingBytes) {
        fail(tooMuchAfterFile());
        return;
      }
      const writable = parser.write(chunk);
      if (!out) {
        if (fed > maxBytesBeforeFile) fail(noFileSoon());
        return;
      }
      if (!writable && !fileEnded) {
        body.pause();
        parser.once("drain", () => failed || body.resume());
      }
    };
    // The tap's listener first: it sees each chunk before busboy parses it.
    body.on("data", watch);
    body.on("data", feed);
  });
}
