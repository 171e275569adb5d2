import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost, replyTo } from "./support/post-bodies";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

describe.each(edgeMatrix)("input refused at the edge, over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  /** How a client sends a UTF-8 header: over HTTP the bytes (which fetch takes as latin1), in an event the text. */
  const utf8Header = (text: string) => (driver === "node" ? Buffer.from(text, "utf8").toString("latin1") : text);

  const expectValidationError = (res: { status: number; json: { error?: { code?: string } } }) => {
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe("VALIDATION_ERROR");
  };

  describe("every string the API accepts is well-formed Unicode without NUL, else 400 VALIDATION_ERROR", () => {
    // Raw JSON text, so the lone surrogate travels as the escape JSON allows and the database cannot store.
    const rawBodies: [string, string][] = [
      ["NUL in text", '{"text":"a\\u0000b"}'],
      ["a lone surrogate in text", '{"text":"\\ud800"}'],
      ["a lone low surrogate in text", '{"text":"x\\udc00y"}'],
      ["NUL in langs", '{"text":"t","langs":["en\\u0000"]}'],
      ["a lone surrogate in langs", '{"text":"t","langs":["\\ud800"]}'],
      ["NUL in selfLabels", '{"text":"t","selfLabels":["a\\u0000"]}'],
      ["a lone surrogate in selfLabels", '{"text":"t","selfLabels":["\\udbff"]}'],
      ["a lone surrogate in an object key", '{"text":"t","\\ud800":1}'],
    ];

    it.each(rawBodies)("%s on create", async (_, raw) => {
      const res = await svc.post("/api/v1/posts", { actor: "u-text", body: raw, headers: { "content-type": "application/json" } });
      expectValidationError(res);
      expect(res.json.error.issues[0].path[0]).toBe("body");
    });

    it("NUL inside a reply's strong reference is refused too", async () => {
      const parent = await createPost(svc, "u-reply");
      const body = replyTo({ uri: `${parent.uri}\u0000`, cid: parent.cid });
      expectValidationError(await svc.post("/api/v1/posts", { actor: "u-reply", json: body }));
    });

    it.each(["cursor=%zz", "kind=%", "rootAuthor=a%2"])("a query with a malformed percent escape (?%s) is refused on both hosts, not read as text", async (query) => {
      const res = await svc.get(`/api/v1/posts?${query}`, { actor: "u-query" });
      expectValidationError(res);
      expect(res.json.error.message).toBe("malformed request target");
    });

    it.each(["rootAuthor=%00", "rootAuthor=a%00b", "kind=%00", "cursor=%00"])("a query parameter with NUL (?%s)", async (query) => {
      const res = await svc.get(`/api/v1/posts?${query}`, { actor: "u-query" });
      expectValidationError(res);
      expect(res.json.error.issues[0].path[0]).toBe("query");
    });

    it("an unknown query parameter is 400 on every route that names none, as on the lists; the public documents take any", async () => {
      const { postId } = (await svc.post("/api/v1/posts", { actor: "u-query-unknown", json: { text: "t" } })).json.data;
      const refused = [
        await svc.get(`/api/v1/posts/${postId}?foo=1`, { actor: "u-query-unknown" }),
        await svc.post("/api/v1/posts?foo=1", { actor: "u-query-unknown", json: { text: "t" } }),
        await svc.call("PATCH", `/api/v1/posts/${postId}?foo=1`, { actor: "u-query-unknown", json: { processing: { transcribe: true } } }),
        await svc.get("/api/v1/posts?foo=1", { actor: "u-query-unknown" }),
      ];
      for (const res of refused) {
        expectValidationError(res);
        expect(res.json.error.issues[0].path[0]).toBe("query");
      }
      const stored = await svc.get(`/api/v1/posts/${postId}`, { actor: "u-query-unknown" });
      expect(stored.json.data.record.text).toBe("t");
      expect(stored.json.data.processing ?? {}).toEqual({});
      for (const path of ["/health?probe=1", "/openapi.json?v=2"]) expect((await svc.get(path, { token: null })).status).toBe(200);
    });

    it("a body with a content coding (Content-Encoding other than identity) is 400, on JSON and multipart routes; identity is the body as it is", async () => {
      for (const coding of ["gzip", "br", "GZIP, deflate"]) {
        const res = await svc.post("/api/v1/posts", { actor: "u-coding", json: { text: "t" }, headers: { "content-encoding": coding } });
        expectValidationError(res);
        expect(res.json.error.issues[0].path).toEqual(["headers", "Content-Encoding"]);
        const upload = await svc.post("/api/v1/audio/upload", { actor: "u-coding", body: "--b\r\n", headers: { "content-type": "multipart/form-data; boundary=b", "content-encoding": coding } });
        expect(upload.json.error.issues[0].path).toEqual(["headers", "Content-Encoding"]);
      }
      expect((await svc.post("/api/v1/posts", { actor: "u-coding", json: { text: "t" }, headers: { "content-encoding": "identity" } })).status).toBe(201);
    });

    it("a path parameter with NUL", async () => {
      expectValidationError(await svc.get("/api/v1/posts/%00", { actor: "u-path" }));
    });

    it.each(["%FF", "%ED%A0%80", "3k%C3"])("a path parameter whose escapes are not UTF-8 (%s) names no post: 404 post not found, not a missing route", async (segment) => {
      for (const path of [`/api/v1/posts/${segment}`, `/api/v1/posts/${segment}/replies`]) {
        const res = await svc.get(path, { actor: "u-path" });
        expect(res.status).toBe(404);
        expect(res.json.error).toEqual({ code: "NOT_FOUND", message: "post not found" });
      }
    });

    it("a body nested thousands of levels deep is 400 VALIDATION_ERROR, not a 500 from the stack", async () => {
      const body = `{"text":"x","selfLabels":${"[".repeat(5000)}${"]".repeat(5000)}}`;
      const res = await svc.post("/api/v1/posts", { actor: "u-deep", body, headers: { "content-type": "application/json" } });
      expectValidationError(res);
      expect(res.json.error.issues[0].message).toMatch(/nested too deeply/);
    });

    if (driver === "node") {
      it("a JSON body whose bytes are not UTF-8 (a latin1 é) is refused, not stored with U+FFFD in its place", async () => {
        const body = Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
        const res = await svc.post("/api/v1/posts", { actor: "u-latin1", body, headers: { "content-type": "application/json" } });
        expectValidationError(res);
        expect(res.json.error.message).toBe("request body is not valid UTF-8");
        expect((await svc.get("/api/v1/posts", { actor: "u-latin1" })).json.data.items).toEqual([]);
      });
    }

    it("well-formed text beyond the BMP is accepted and returned as sent", async () => {
      const view = await createPost(svc, "u-emoji", { text: "🎙️ astral 𝄞", selfLabels: ["🏷️"] });
      expect(view.record).toMatchObject({ text: "🎙️ astral 𝄞", selfLabels: ["🏷️"] });
    });
  });

  describe("the acting actor header is UTF-8, normalised to NFC, and control characters are refused with 400", () => {
    it("X-Svc-Acting-Actor sent as UTF-8 is stored and returned as the same text, not its latin1 reading", async () => {
      const created = await svc.post("/api/v1/posts", { headers: { "x-svc-acting-actor": utf8Header("josé") }, json: { text: "hola" } });
      expect(created.status).toBe(201);
      const view = await svc.get(`/api/v1/posts/${created.json.data.postId}`, { headers: { "x-svc-acting-actor": utf8Header("josé") } });
      expect(view.json.data.authorId).toBe("josé");
      expect(view.json.data.viewer.isAuthor).toBe(true);
    });

    it("the NFD spelling of a name is the same actor as its NFC spelling", async () => {
      const nfc = "zoë".normalize("NFC");
      const nfd = "zoë".normalize("NFD");
      expect(nfd).not.toBe(nfc);
      const created = await svc.post("/api/v1/posts", { headers: { "x-svc-acting-actor": utf8Header(nfd) }, json: { text: "nfd" } });
      expect(created.status).toBe(201);
      const mine = await svc.get("/api/v1/posts", { headers: { "x-svc-acting-actor": utf8Header(nfc) } });
      expect(mine.json.data.items.map((p: { authorId: string }) => p.authorId)).toEqual([nfc]);
      const byRoot = await svc.get(`/api/v1/posts?rootAuthor=${encodeURIComponent(nfd)}`, { token: undefined });
      expect(byRoot.status).toBe(200);
    });

    it("an actor of 256 characters beyond the BMP (512 UTF-16 units) is accepted, and its threads found by rootAuthor; 257 is refused", async () => {
      const actor = "🎙".repeat(256);
      const prompt = await svc.post("/api/v1/posts", { headers: { "x-svc-acting-actor": utf8Header(actor) }, json: { text: "long name" } });
      expect(prompt.status).toBe(201);
      const other = "u-longname-replier";
      const view = await svc.get(`/api/v1/posts/${prompt.json.data.postId}`, { actor: other });
      const reply = await svc.post("/api/v1/posts", { actor: other, json: replyTo(view.json.data) });
      expect(reply.status).toBe(201);
      const byRoot = await svc.get(`/api/v1/posts?rootAuthor=${encodeURIComponent(actor)}`, { token: undefined });
      expect(byRoot.status).toBe(200);
      expect(byRoot.json.data.items.map((p: { authorId: string }) => p.authorId)).toEqual([other]);
      expectValidationError(await svc.post("/api/v1/posts", { headers: { "x-svc-acting-actor": utf8Header("🎙".repeat(257)) }, json: { text: "x" } }));
      expectValidationError(await svc.get(`/api/v1/posts?rootAuthor=${encodeURIComponent("🎙".repeat(257))}`, { token: undefined }));
    });

    it.each([
      ["a tab", "a\tb"],
      ["a C1 control (NEL)", "a\u0085b"],
      ["a comma, as a header sent twice arrives (API Gateway joins the values with \",\")", "alice,bob"],
    ])("an actor with %s is refused with 400 VALIDATION_ERROR", async (_, actor) => {
      const res = await svc.post("/api/v1/posts", { headers: { "x-svc-acting-actor": utf8Header(actor) }, json: { text: "x" } });
      expectValidationError(res);
      expect(res.json.error.issues[0].path).toEqual(["headers", "X-Svc-Acting-Actor"]);
    });

    if (driver === "node") {
      it("an actor header whose bytes are not UTF-8 is refused with 400 VALIDATION_ERROR", async () => {
        // 0xE9 alone is "é" in latin1 and no UTF-8 at all.
        const res = await svc.post("/api/v1/posts", { headers: { "x-svc-acting-actor": "jos\u00e9" }, json: { text: "x" } });
        expectValidationError(res);
      });
    }
  });

  describe("query parsing never consults Object.prototype", () => {
    it.each(["toString", "constructor", "hasOwnProperty", "__proto__", "valueOf"])("?%s=1 is an unknown parameter, not a repeated one", async (name) => {
      const res = await svc.get(`/api/v1/posts?${name}=1`, { actor: "u-proto" });
      expectValidationError(res);
      expect(JSON.stringify(res.json.error)).not.toMatch(/repeated/);
    });

    it("?constructor=a&constructor=b is repeated", async () => {
      const res = await svc.get("/api/v1/posts?constructor=a&constructor=b", { actor: "u-proto" });
      expectValidationError(res);
      expect(res.json.error.message).toMatch(/repeated/);
    });

    it("a prototype name next to valid parameters does not change how they are read", async () => {
      await createPost(svc, "u-proto-2");
      const ok = await svc.get("/api/v1/posts?kind=prompt&limit=5", { actor: "u-proto-2" });
      expect(ok.json.data.items).toHaveLength(1);
      const res = await svc.get("/api/v1/posts?kind=prompt&toString=x", { actor: "u-proto-2" });
      expectValidationError(res);
    });
  });
});
