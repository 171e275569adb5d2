import fc from "fast-check";
import * as z from "zod";
import type { RouteDef } from "../../core/http/route";

/**
 * fast-check arbitraries of HTTP requests generated from the route table's schemas: mostly well-formed values (so
 * requests reach the handlers and the database), mixed with what a hostile caller sends (wrong types, unknown
 * fields, NUL, lone surrogates, prototype names, huge or malformed values, broken JSON, bad percent-encoding).
 */

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  maxLength?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
};

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface FuzzContext {
  /** Tokens and ids that exist, so some requests get past authentication and find posts. */
  tokens: string[];
  systemToken: string;
  postIds: () => string[];
  postRefs: () => { uri: string; cid: string }[];
  blobCids: () => string[];
  /** Query strings that only the service can make (signed playback URLs), by route file. */
  signedQueries?: Record<string, () => string[]>;
}

const hostileStrings = [
  "",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00",
  "__proto__",
  "constructor",
  "toString",
  "../../etc/passwd",
  "blobs/../x",
  "%00",
  "%zz",
  "'; DROP TABLE posts; --",
  "\u202e\u0301\ufeff",
  "é".normalize("NFD"),
  "🎙️".repeat(3),
  "a".repeat(300),
  "x".repeat(4_000),
  "9".repeat(40),
  "-1",
  "0",
  "1e309",
  "null",
  "at://did:web:alpha.test/dev.svc.audio.post/3kzzzzzzzzzzz",
  "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",
];

const anyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...hostileStrings) },
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  anyString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -0, 1e300, 2 ** 31),
  fc.array(fc.oneof(anyString, fc.integer()), { maxLength: 4 }),
  fc.dictionary(anyString, fc.oneof(anyString, fc.integer()), { maxKeys: 3 }),
);

/** Values for a JSON schema: usually valid-shaped, sometimes anything at all. */
export const fromSchema = (schema: JsonSchema, ctx: FuzzContext, name = ""): fc.Arbitrary<unknown> => {
  const valid = validFromSchema(schema, ctx, name);
  return fc.oneof({ weight: 30, arbitrary: valid }, { weight: 1, arbitrary: anyJson });
};

const validFromSchema = (schema: JsonSchema, ctx: FuzzContext, name: string): fc.Arbitrary<unknown> => {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((v) => fromSchema(v, ctx, name)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const entries = Object.entries(props).map(([key, sub]) => {
        const value = fromSchema(sub, ctx, key);
        const absent = fc.constant(undefined);
        return [
          key,
          required.has(key) ? fc.oneof({ weight: 30, arbitrary: value }, { weight: 1, arbitrary: absent }) : fc.oneof({ weight: 4, arbitrary: absent }, { weight: 1, arbitrary: value }),
        ] as const;
      });
      return fc
        .tuple(fc.record(Object.fromEntries(entries)), rarely(fc.tuple(anyString, anyJson), 20))
        .map(([record, extra]) => {
          const out: Record<string, unknown> = {};
          for (const [key, value] of Object.entries(record)) if (value !== undefined) out[key] = value;
          if (extra) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true });
          return out;
        });
    }
    case "array":
      return fc.array(fromSchema(schema.items ?? {}, ctx, name), { maxLength: (schema.maxItems ?? 3) + 1 });
    case "integer":
      return fc.oneof(
        fc.integer({ min: schema.minimum ?? -10, max: Math.min(schema.maximum ?? 1_000_000, 1_000_000) }),
        fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 0, (schema.maximum ?? 0) + 1, -1, 0),
      );
    case "number":
      return fc.double();
    case "boolean":
      return fc.boolean();
    case "string":
      return stringFor(name, schema, ctx);
    default:
      return anyJson;
  }
};

/** Strings that mean something where they go (ids, refs, CIDs, language tags), else any string. */
const stringFor = (name: string, schema: JsonSchema, ctx: FuzzContext): fc.Arbitrary<string> => {
  const known: fc.Arbitrary<string>[] = [];
  if (name === "uri") known.push(fc.nat().map((i) => at(ctx.postRefs(), i)?.uri ?? "at://x"));
  if (name === "cid") known.push(fc.nat().map((i) => at(ctx.postRefs(), i)?.cid ?? "bafy"));
  if (name === "$link") known.push(fc.nat().map((i) => at(ctx.blobCids(), i) ?? "bafy"));
  if (name === "postId" || name === "cursor") known.push(fc.nat().map((i) => at(ctx.postIds(), i) ?? "3kzzzzzzzzzzz"));
  if (name === "text") known.push(fc.string({ maxLength: 3_100 }));
  if (name === "limit") known.push(fc.integer({ min: -1, max: 101 }).map(String));
  if (name === "kind") known.push(fc.constantFrom("prompt", "reply"));
  if (name === "mimeType") known.push(fc.constantFrom("audio/wav", "audio/mpeg", "audio/webm;codecs=opus", "text/plain"));
  if (name === "appId") known.push(fc.constantFrom("alpha", "beta", "nobody"));
  if (name === "langs" || name === "") known.push(fc.constantFrom("en", "pt-BR", "x-klingon", "zh-Hant-TW"));
  const bounded = schema.maxLength ? fc.string({ maxLength: schema.maxLength + 1 }) : anyString;
  return known.length ? fc.oneof({ weight: 3, arbitrary: fc.oneof(...known) }, { weight: 2, arbitrary: bounded }, { weight: 1, arbitrary: anyString }) : fc.oneof(bounded, anyString);
};

/** `arb` once in `oneIn` draws, else undefined. */
const rarely = <T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** An item of a list that grows as the run creates things, chosen by a generated index (so a seed replays). */
const at = <T>(items: T[], i: number): T | undefined => items[i % Math.max(1, items.length)];

/** Percent-encodes the UTF-8 bytes of any string (a lone surrogate becomes U+FFFD, as a client's encoder would). */
const pct = (s: string) => [...Buffer.from(s, "utf8")].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0").toUpperCase()}`)).join("");

const queryString = (values: Record<string, unknown>) =>
  Object.entries(values)
    .map(([key, value]) => `${pct(key)}=${pct(typeof value === "string" ? value : JSON.stringify(value) ?? "")}`)
    .join("&");

/** Header values fetch can carry: latin1 without control characters (Node refuses the rest before any handler). */
const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 30 }),
  fc.constantFrom("josé", Buffer.from("zoë", "utf8").toString("latin1"), Buffer.from("e\u0301", "utf8").toString("latin1"), "x".repeat(300)),
);

const jsonSchemaOf = (schema: z.ZodType | undefined): JsonSchema | undefined =>
  schema ? (z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema) : undefined;

/** One route's requests. */
export const requestsFor = (route: RouteDef, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> => {
  const params = jsonSchemaOf(route.params);
  const query = jsonSchemaOf(route.query);
  const body = route.body?.kind === "json" ? jsonSchemaOf(route.body.schema) : undefined;

  const pathArb = params
    ? fc
        .tuple(fromSchema(params, ctx), rarely(fc.constantFrom("%zz", "%00", "%ED%A0%80", "..", "%2F", "a%2Fb"), 10))
        .map(([values, hostile]) =>
          route.path.replace(/\{(\w+)\}/g, (_, key: string) => {
            const value = (values as Record<string, unknown>)?.[key];
            if (hostile !== undefined) return hostile;
            return pct(typeof value === "string" && value !== "" ? value : JSON.stringify(value ?? "x"));
          }),
        )
    : fc.constant(route.path);

  const signed = ctx.signedQueries?.[route.file];
  const queryArb = query
    ? fc.oneof(
        ...(signed ? [{ weight: 8, arbitrary: fc.nat().map((i) => at(signed(), i) ?? "") }] : []),
        { weight: 8, arbitrary: fromSchema(query, ctx).map((q) => (q && typeof q === "object" && !Array.isArray(q) ? queryString(q as Record<string, unknown>) : "")) },
        { weight: 1, arbitrary: fc.constantFrom("a=%zz", "=&=&", "limit=1&limit=2", "toString=1", "__proto__=x", "kind", "cursor=%00") },
      )
    : fc.oneof({ weight: 9, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constantFrom("x=1", "%zz") });

  const bodyArb: fc.Arbitrary<{ bytes?: Buffer; type?: string }> = body
    ? fc.oneof(
        { weight: 8, arbitrary: fromSchema(body, ctx).map((v) => ({ bytes: Buffer.from(JSON.stringify(v) ?? "null"), type: "application/json" })) },
        { weight: 1, arbitrary: fc.constantFrom('{"text":', "[]", "null", '{"text":"\\ud800"}', "{\"a\":1}".repeat(3), "\u0000").map((raw) => ({ bytes: Buffer.from(raw), type: "application/json" })) },
        { weight: 1, arbitrary: fc.constantFrom("text/plain", "application/json; charset=latin1", "multipart/form-data").map((type) => ({ bytes: Buffer.from('{"text":"t"}'), type })) },
      )
    : route.body?.kind === "multipart"
      ? fc
          .tuple(fc.constantFrom("audio/wav", "audio/mpeg", "audio/ogg", "text/plain", "audio/webm; codecs=opus"), fc.uint8Array({ maxLength: 512 }), fc.boolean())
          .map(([type, bytes, wellFormed]) => {
            const boundary = "fuzzboundary";
            const part = Buffer.concat([
              Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\nContent-Type: ${type}\r\n\r\n`),
              Buffer.from(bytes),
              Buffer.from(wellFormed ? `\r\n--${boundary}--\r\n` : ""),
            ]);
            return { bytes: part, type: `multipart/form-data; boundary=${boundary}` };
          })
      : fc.constant({});

  const auth = route.auth === "system" ? fc.constantFrom(`Bearer ${ctx.systemToken}`, `Bearer ${ctx.systemToken}`, "Bearer wrong", undefined) : fc.oneof(
    { weight: 16, arbitrary: fc.constantFrom(...ctx.tokens.map((t) => `Bearer ${t}`)) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, "Bearer", "Basic abc", "Bearer short") },
    { weight: 1, arbitrary: headerValue },
  );
  const actor = fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 400 }).map((n) => `fuzz-${n}`) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: headerValue },
  );
  const optionalHeader = (values: fc.Arbitrary<string>) => rarely(values, 4);

  return fc
    .record({
      path: pathArb,
      query: queryArb,
      body: bodyArb,
      authorization: auth,
      actor,
      actorDid: optionalHeader(fc.oneof(fc.constant("did:plc:abc123"), headerValue)),
      idempotencyKey: route.idempotent ? optionalHeader(fc.oneof(fc.string({ maxLength: 12 }).map((s) => `k-${pct(s)}`), headerValue)) : fc.constant(undefined),
      requestId: optionalHeader(fc.oneof(fc.uuid(), headerValue)),
      range: route.method === "GET" ? optionalHeader(fc.constantFrom("bytes=0-1", "bytes=5-", "bytes=-1", "bytes=9-1", "bytes=0-1,3-4", "items=1-2")) : fc.constant(undefined),
    })
    .map((r) => {
      const headers: Record<string, string> = {};
      if (r.authorization !== undefined) headers.authorization = r.authorization;
      if (r.actor !== undefined) headers["x-svc-acting-actor"] = r.actor;
      if (r.actorDid !== undefined) headers["x-svc-acting-actor-did"] = r.actorDid;
      if (r.idempotencyKey !== undefined) headers["idempotency-key"] = r.idempotencyKey;
      if (r.requestId !== undefined) headers["x-request-id"] = r.requestId;
      if (r.range !== undefined) headers.range = r.range;
      if (r.body.type !== undefined) headers["content-type"] = r.body.type;
      return { method: route.method, path: r.query ? `${r.path}?${r.query}` : r.path, headers, body: r.body.bytes };
    });
};
