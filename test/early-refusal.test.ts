import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("early refusals of an upload on the Node host on $name", ({ open }) => {
  let svc: TestService;
  let upload: { body: Buffer; contentType: string };
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: open });
    upload = await multipartBody([{ name: "file", bytes: Buffer.alloc(8 * 1024 * 1024, 7), type: "audio/wav" }]);
  });
  afterAll(() => svc?.close());

  /**
   * Sends the upload as a client on a slower link does, still sending when the answer comes: after its first chunk
   * it sends the rest only once the answer has arrived (a server that waited for the whole body would never answer).
   */
  const send = (headers: Record<string, string>) => {
    const chunk = 256 * 1024;
    let offset = 0;
    let answered!: () => void;
    const answer = new Promise<void>((resolve) => (answered = resolve));
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (offset >= upload.body.length) return controller.close();
        if (offset > 0) await answer;
        controller.enqueue(new Uint8Array(upload.body.subarray(offset, (offset += chunk))));
      },
    });
    return fetch(`${svc.baseUrl}/api/v1/audio/upload`, {
      method: "POST",
      headers: { "content-type": upload.contentType, "x-forwarded-for": "203.0.113.9", ...headers },
      body,
      duplex: "half",
    } as RequestInit).finally(answered);
  };

  it("an upload refused before its body is read (401) reaches the client as the error envelope, never a reset connection", async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await send({ authorization: "Bearer wrong-token-0000000000000000000000000" }).then(
        async (r) => `${r.status} ${(await r.json()).error.code}`,
        (error: Error) => `${error.message} ${String((error.cause as Error | undefined)?.message ?? "")}`,
      );
      outcomes.push(res);
    }
    expect(new Set(outcomes)).toEqual(new Set(["401 UNAUTHORIZED"]));
    expect((await svc.get("/health", { token: null })).status).toBe(200);
  });

  it("a rate-limited upload (429) is readable too, with its Retry-After", async () => {
    const headers = { authorization: `Bearer ${svc.tenants.alpha.token}`, "x-svc-acting-actor": "early-429" };
    const answers: (string | number)[] = [];
    for (let i = 0; i < 26; i++) {
      answers.push(await send(headers).then((r) => r.status, (error: Error) => error.message));
    }
    // 20 per hour per actor: those stored or refused as not audio, then 429s, and never a failed fetch.
    expect(answers.filter((a) => typeof a !== "number")).toEqual([]);
    expect(answers.slice(20)).toEqual([429, 429, 429, 429, 429, 429]);
  });
});
