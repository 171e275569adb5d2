/**
 * One source of truth: the lexicons are the records' contract and the zod schemas mirror them, so the OpenAPI
 * description generated from those schemas must say what the lexicons say. Starting from the records and views the
 * API serves, this walks every lexicon def they reach beside the OpenAPI schema that describes it, and lists where
 * the two disagree on required fields, types (integer vs number), lengths, bounds, enums and formats.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../core/openapi/openapi-document";
import { routeList } from "../functions/routes";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = openApiDocument(routeList) as Json;

const lexiconDir = path.resolve(import.meta.dirname, "../lexicons");
const lexiconDefs = new Map<string, Json>(
  readdirSync(lexiconDir)
    .filter((file) => file.endsWith(".json"))
    .flatMap((file) => {
      const doc = JSON.parse(readFileSync(path.join(lexiconDir, file), "utf8")) as { id: string; defs: Record<string, Json> };
      return Object.entries(doc.defs).map(([name, def]) => [`${doc.id}#${name}`, def] as const);
    }),
);

/** Where the API serves each lexicon def it starts from; the walk finds the rest by following refs. */
const served: Record<string, string> = {
  "dev.svc.audio.post#main": "PostRecord",
  "dev.svc.embed.audio#view": "AudioEmbedView",
};

/** Defs the API does not serve, and why: any other def must be reached by the walk. */
const notServed: Record<string, string> = {
  "dev.svc.actor.profile#main": "the service serves no profiles",
  "dev.svc.audio.transcript#main": "the record is served only as its #view, lifted into the embed",
};

/** A lexicon format as JSON Schema spells it (lexicon `datetime` is JSON Schema `date-time`); the rest keep their names. */
const formatOf = (format: string | undefined) => (format === "datetime" ? "date-time" : format);

/** zod writes the safe-integer range on every `int()`: that is no bound in lexicon terms. */
const lower = (value: number | undefined) => (value === Number.MIN_SAFE_INTEGER ? undefined : value);
const upper = (value: number | undefined) => (value === Number.MAX_SAFE_INTEGER ? undefined : value);

const resolveRef = (ref: string, docId: string) => {
  const full = ref.startsWith("#") ? `${docId}${ref}` : ref.includes("#") ? ref : `${ref}#main`;
  return { id: full, docId: full.split("#")[0]! };
};

const resolveSchema = (schema: Json): Json =>
  typeof schema.$ref === "string" ? resolveSchema(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")] ?? {}) : schema;

/** Every disagreement, by the lexicon def it was found in. */
const mismatches = new Map<string, string[]>();
const visited = new Set<string>();

const walkDef = (id: string, schema: Json) => {
  if (visited.has(id)) return;
  visited.add(id);
  const def = lexiconDefs.get(id);
  mismatches.set(id, def ? [] : ["no such lexicon def"]);
  if (def) compare(def.type === "record" ? def.record : def, schema, { def: id, docId: id.split("#")[0]!, at: "" });
};

const same = (where: { def: string; at: string }, what: string, lexicon: unknown, openapi: unknown) => {
  if (JSON.stringify(lexicon) !== JSON.stringify(openapi)) {
    mismatches.get(where.def)!.push(`${where.at || "(def)"} ${what}: lexicon ${JSON.stringify(lexicon)}, OpenAPI ${JSON.stringify(openapi)}`);
  }
};

function compare(lex: Json, raw: Json, where: { def: string; docId: string; at: string }): void {
  const schema = resolveSchema(raw);
  switch (lex.type) {
    case "ref": {
      const target = resolveRef(lex.ref, where.docId);
      return walkDef(target.id, raw);
    }
    case "union": {
      // Each member is told apart by its `$type`, as lexicon unions are.
      const branches: Json[] = (schema.oneOf ?? schema.anyOf ?? [schema]).map(resolveSchema);
      for (const ref of lex.refs as string[]) {
        const target = resolveRef(ref, where.docId);
        const $type = target.id.endsWith("#main") ? target.docId : target.id;
        const branch = branches.find((b) => b.properties?.$type?.const === $type);
        if (!branch) same(where, `union member ${$type}`, "present", "absent");
        else walkDef(target.id, branch);
      }
      return;
    }
    case "object": {
      same(where, "type", "object", schema.type);
      const properties = (lex.properties ?? {}) as Record<string, Json>;
      const required = (name: string) => ((schema.required ?? []) as string[]).includes(name);
      for (const name of Object.keys(schema.properties ?? {})) {
        // `$type` names the def, which every lexicon object may carry.
        if (!(name in properties) && name !== "$type") same({ ...where, at: `${where.at}.${name}` }, "property", "absent", "present");
      }
      for (const [name, property] of Object.entries(properties)) {
        const at = { ...where, at: `${where.at}.${name}` };
        if (!schema.properties?.[name]) {
          same(at, "property", "present", "absent");
          continue;
        }
        same(at, "required", ((lex.required ?? []) as string[]).includes(name), required(name));
        compare(property, schema.properties[name], at);
      }
      return;
    }
    case "blob":
      same(where, "accepted types", lex.accept, resolveSchema(schema.properties?.mimeType ?? {}).enum);
      same(where, "maxSize", lex.maxSize, resolveSchema(schema.properties?.size ?? {}).maximum);
      return;
    case "array":
      same(where, "type", "array", schema.type);
      same(where, "maxLength (maxItems)", lex.maxLength, schema.maxItems);
      same(where, "minLength (minItems)", lex.minLength, schema.minItems);
      return compare(lex.items, schema.items ?? {}, { ...where, at: `${where.at}[]` });
    case "string":
      same(where, "type", "string", schema.type);
      same(where, "maxLength", lex.maxLength, schema.maxLength);
      same(where, "minLength", lex.minLength, schema.minLength);
      // JSON Schema has no grapheme count: the description carries it as an extension keyword.
      same(where, "maxGraphemes", lex.maxGraphemes, schema["x-maxGraphemes"]);
      same(where, "minGraphemes", lex.minGraphemes, schema["x-minGraphemes"]);
      same(where, "format", formatOf(lex.format), schema.format);
      same(where, "enum", lex.enum, schema.enum);
      same(where, "const", lex.const, schema.const);
      return;
    case "integer":
      same(where, "type", "integer", schema.type);
      same(where, "minimum", lex.minimum, lower(schema.minimum));
      same(where, "maximum", lex.maximum, upper(schema.maximum));
      same(where, "enum", lex.enum, schema.enum);
      same(where, "const", lex.const, schema.const);
      return;
    case "boolean":
      same(where, "type", "boolean", schema.type);
      return;
    case "unknown":
      return;
    default:
      same(where, "lexicon type", "one this test compares", lex.type);
  }
}

for (const [id, component] of Object.entries(served)) walkDef(id, { $ref: `#/components/schemas/${component}` });

describe("the OpenAPI description says what the lexicons say (the lexicons are the contract)", () => {
  it.each([...mismatches.keys()])("%s: required fields, integer or number, lengths, bounds, enums and formats agree", (id) => {
    expect(mismatches.get(id)).toEqual([]);
  });

  it("the walk reaches every lexicon def, but the ones the API does not serve", () => {
    const unreached = [...lexiconDefs.keys()].filter((id) => !visited.has(id) && !(id in notServed));
    expect(unreached).toEqual([]);
    expect(Object.keys(notServed).filter((id) => visited.has(id) || !lexiconDefs.has(id))).toEqual([]);
  });
});
