import { readdir } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pcmWav } from "./support/audio-fixtures";
import { backends } from "./support/databases";
import { logRecorder } from "./support/log-recorder";
import { startTestService, type TestService } from "./support/test-service";

/** The production floor is 1 KiB/s over 30 s windows; the same floor over half-second windows keeps this quick. */
const windowMs = 500;
const minBytesPerSecond = 1024;

describe.each(backends)("the upload body rate floor on the Node host, on $name", ({ open }) => {
  let svc: TestService;
  const log = logRecorder();
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      sql: open,
      logger: log.logger,
      env: { SVC_BODY_RATE_WINDOW_MS: String(windowMs), SVC_BODY_MIN_BYTES_PER_SECOND: String(minBytesPerSecond) },
    });
  });
  afterAll(() => svc?.close());

  const stagingFiles = async () => readdir(path.join(svc.blobDir, "staging")).catch(() => [] as string[]);

  /** Opens an upload of `wav` and sends its request head and multipart head; the caller sends the file's bytes. */
  const openUpload = async (actor: string, wav: Buffer) => {
    const boundary = "paced";
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const socket = connect(Number(new URL(svc.baseUrl).port), "127.0.0.1");
    socket.on("error", () => {});
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      `POST /api/v1/audio/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${svc.tenants.alpha.token}\r\n` +
        `X-Svc-Acting-Actor: ${actor}\r\nX-Forwarded-For: 198.51.100.${actor.length}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + wav.length + tail.length}\r\n\r\n`,
    );
    socket.write(head);
    return { socket, tail, answer: answerOf(socket) };
  };

  it("an upload whose body averages under the floor (1 KiB/s over 30 s windows by default) is answered 400 VALIDATION_ERROR and closed within two windows, and its staging file removed", async () => {
    const before = log.lines.length;
    const wav = pcmWav(200_000);
    const { socket, answer } = await openUpload("trickler", wav);
    socket.write(wav.subarray(0, 8 * 1024));
    await expect.poll(async () => (await stagingFiles()).length > 0, { timeout: 2_000 }).toBe(true);
    // Then a byte every 100 ms: never idle, always far under the floor.
    const started = Date.now();
    let sent = 8 * 1024;
    const trickle = setInterval(() => socket.writable && socket.write(wav.subarray(sent, ++sent)), 100);
    const res = await answer;
    clearInterval(trickle);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ success: false, error: { code: "VALIDATION_ERROR" }, requestId: res.headers["x-request-id"] });
    expect(res.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(2 * windowMs + 1_000);
    expect(await stagingFiles()).toEqual([]);
    const line = log.lines.slice(before).find((l) => l.message === "request" && l.fields.route === "upload-audio");
    expect(line?.fields).toMatchObject({ status: 400, errorCode: "VALIDATION_ERROR" });
    expect(log.lines.slice(before).filter((l) => l.level === "error")).toEqual([]);
  });

  it("an upload that keeps above the floor is stored however many windows it takes: 16 kB at 4 KiB/s over eight windows is a 201", async () => {
    const wav = pcmWav(16_000);
    const { socket, tail, answer } = await openUpload("steady", wav);
    for (let at = 0; at < wav.length; at += 512) {
      socket.write(wav.subarray(at, at + 512));
      await sleep(125);
    }
    socket.write(tail);
    const res = await answer;
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body).data.blob.size).toBe(16_000);
    socket.destroy();
  });
});

/** The first response on `socket`, and whether the server then closed the connection. */
const answerOf = (socket: Socket) =>
  new Promise<{ status: number; headers: Record<string, string>; body: string; closed: boolean }>((resolve) => {
    let bytes = Buffer.alloc(0);
    let parsed: { status: number; headers: Record<string, string>; body: string } | undefined;
    const complete = () => {
      const end = bytes.indexOf("\r\n\r\n");
      if (end < 0) return undefined;
      const [statusLine, ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      const body = bytes.subarray(end + 4);
      if (body.length < Number(headers["content-length"])) return undefined;
      return { status: Number(statusLine!.split(" ")[1]), headers, body: body.toString("utf8") };
    };
    socket.on("data", (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      parsed ??= complete();
      // A kept-alive connection stays open after a complete answer: that answer is the result.
      if (parsed && parsed.headers.connection !== "close") resolve({ ...parsed, closed: false });
    });
    socket.once("close", () => resolve({ ...(parsed ?? { status: 0, headers: {}, body: "" }), closed: true }));
  });
