import { readFileSync, readdirSync } from "node:fs";
import { parseLexiconDoc } from "@atproto/lexicon";
import { describe, expect, it } from "vitest";
import { acceptedMimeTypes as audioMimeTypes, maxUploadBytes as maxAudioBytes } from "./accepted-types";
import { assertValidRecord, lexiconDocs, lexicons } from "./lexicons";
import { nsids } from "./nsids";
import { stageOrder } from "./stages";

const dir = new URL("../../lexicons/", import.meta.url);
const files = readdirSync(dir).filter((name) => name.endsWith(".json"));
const onDisk = files.map((name) => ({ name, doc: JSON.parse(readFileSync(new URL(name, dir), "utf8")) }));

// Keys the Lexicon v1 spec defines per type; @atproto/lexicon ignores unknown keys, so a typo would pass silently.
const allowedKeys: Record<string, string[]> = {
  record: ["type", "description", "key", "record"],
  object: ["type", "description", "required", "nullable", "properties"],
  ref: ["type", "description", "ref"],
  union: ["type", "description", "refs", "closed"],
  array: ["type", "description", "items", "minLength", "maxLength"],
  blob: ["type", "description", "accept", "maxSize"],
  unknown: ["type", "description"],
  boolean: ["type", "description", "default", "const"],
  integer: ["type", "description", "default", "minimum", "maximum", "enum", "const"],
  string: [
    "type", "description", "format", "default", "minLength", "maxLength",
    "minGraphemes", "maxGraphemes", "enum", "const", "knownValues",
  ],
};

function unknownKeys(def: Record<string, unknown>, path: string): string[] {
  const allowed = allowedKeys[def.type as string];
  if (!allowed) return [`${path}: unexpected type ${String(def.type)}`];
  const found = Object.keys(def).filter((key) => !allowed.includes(key)).map((key) => `${path}.${key}`);
  const children: [string, unknown][] = [];
  if (def.type === "record") children.push(["record", def.record]);
  if (def.type === "array") children.push(["items", def.items]);
  if (def.type === "object") {
    for (const [key, prop] of Object.entries((def.properties ?? {}) as Record<string, unknown>)) children.push([key, prop]);
  }
  return found.concat(children.flatMap(([key, child]) => unknownKeys(child as Record<string, unknown>, `${path}.${key}`)));
}

describe("lexicons", () => {
  it("every lexicon document is valid Lexicon v1 and loads into Lexicons", () => {
    expect(files.length).toBeGreaterThan(0);
    for (const { doc } of onDisk) {
      expect(() => parseLexiconDoc(doc)).not.toThrow();
      expect(lexicons.get(doc.id)).toBeDefined();
    }
  });

  it("every lexicon document's id matches its file name", () => {
    for (const { name, doc } of onDisk) expect(`${doc.id}.json`).toBe(name);
  });

  it("every lexicon file is loaded, and only those", () => {
    expect(lexiconDocs.map((doc) => doc.id).sort()).toEqual(onDisk.map(({ doc }) => doc.id).sort());
    expect(Object.values(nsids).sort()).toEqual(onDisk.map(({ doc }) => doc.id).sort());
  });

  it("lexicon definitions use only keys the Lexicon spec defines", () => {
    for (const { name, doc } of onDisk) {
      const problems = Object.entries(doc.defs).flatMap(([id, def]) => unknownKeys(def as Record<string, unknown>, `${name}#${id}`));
      expect(problems).toEqual([]);
    }
  });

  it("records use the declared record keys", () => {
    const key = (nsid: string) => (lexicons.getDefOrThrow(nsid, ["record"]) as { key?: string }).key;
    expect(key(nsids.post)).toBe("tid");
    expect(key(nsids.transcript)).toBe("any");
    expect(key(nsids.profile)).toBe("literal:self");
  });

  it("a post's processing lists exactly the stages, in pass order (core/records/stages.ts)", () => {
    const processing = lexicons.getDefOrThrow(`${nsids.post}#processing`, ["object"]);
    expect(Object.keys(processing.properties)).toEqual(stageOrder);
    for (const stage of stageOrder) expect(processing.properties[stage]).toEqual({ type: "boolean" });
  });

  it("the audio blob accepts exactly the seven upload MIME types, up to 25 MiB", () => {
    const embed = lexicons.getDefOrThrow(nsids.embedAudio, ["object"]);
    const audio = embed.properties.audio as { accept?: string[]; maxSize?: number };
    expect(audio.accept).toEqual([...audioMimeTypes]);
    expect(audio.maxSize).toBe(maxAudioBytes);
  });
});

describe("assertValidRecord", () => {
  const cid = "bafkreibme22gw2h7y2h7tg2fhqotaqjucnbc24deqo72b6mkl2egezxhvy";
  const post = (mimeType: string, size: number) => ({
    $type: nsids.post,
    text: "",
    createdAt: "2026-01-01T00:00:00.000Z",
    embed: { $type: nsids.embedAudio, audio: { $type: "blob", ref: { $link: cid }, mimeType, size } },
  });

  it("a blob within the lexicon's accept list and maxSize is valid", () => {
    expect(() => assertValidRecord(nsids.post, post("audio/ogg", maxAudioBytes))).not.toThrow();
  });

  it("a blob outside the lexicon's accept list is invalid, even with a codec parameter", () => {
    expect(() => assertValidRecord(nsids.post, post("audio/flac", 10))).toThrow(/mimeType/);
    expect(() => assertValidRecord(nsids.post, post("audio/webm;codecs=opus", 10))).toThrow(/mimeType/);
  });

  it("a blob over the lexicon's maxSize is invalid", () => {
    expect(() => assertValidRecord(nsids.post, post("audio/ogg", maxAudioBytes + 1))).toThrow(/larger/);
  });

  it("a record of another type, or with a missing required field, is invalid", () => {
    expect(() => assertValidRecord(nsids.transcript, post("audio/ogg", 1))).toThrow(/\$type/);
    expect(() => assertValidRecord(nsids.post, { $type: nsids.post, text: "hi" })).toThrow(/createdAt/);
  });

  it("a transcript record (docs/decisions.md#transcripts: subject, text, lang, model, segments, createdAt) and a profile record validate against their lexicons", () => {
    const transcript = {
      $type: nsids.transcript,
      subject: { uri: "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/dev.svc.audio.post/3lbqcfqdbxk2a", cid },
      text: "hello world",
      lang: "en",
      model: "scribe_v2",
      segments: [{ startMs: 0, endMs: 900, text: "hello world" }],
      createdAt: "2026-01-01T00:00:00.000Z",
    };
    expect(() => assertValidRecord(nsids.transcript, transcript)).not.toThrow();
    const { subject, ...withoutSubject } = transcript;
    expect(subject).toBeDefined();
    expect(() => assertValidRecord(nsids.transcript, withoutSubject)).toThrow(/subject/);
    expect(() => assertValidRecord(nsids.transcript, { ...transcript, segments: [{ startMs: -1, endMs: 1, text: "" }] })).toThrow();
    expect(() => assertValidRecord(nsids.profile, { $type: nsids.profile, displayName: "Ada" })).not.toThrow();
    expect(() => assertValidRecord(nsids.profile, { $type: nsids.profile, displayName: "a".repeat(65) })).toThrow();
  });

  it("the embed view, transcript view and waveform validate against their object definitions", () => {
    const view = {
      url: "https://svc.example/api/v1/audio?url=blobs/app/x&exp=1&sig=s",
      mimeType: "audio/ogg",
      size: 10,
      durationMs: 1200,
      transcript: { text: "hi", segments: [{ startMs: 0, endMs: 10, text: "hi" }] },
      waveform: { version: 2, channels: 1, sample_rate: 44100, samples_per_pixel: 256, bits: 8, length: 2, data: [-1, 1, -2, 2] },
    };
    expect(lexicons.validate(`${nsids.embedAudio}#view`, view).success).toBe(true);
    const figures = { integratedLufs: -16, truePeakDbtp: -1.3, rangeLu: null };
    expect(lexicons.validate(`${nsids.embedAudio}#view`, { ...view, loudness: { ...figures, before: figures } }).success).toBe(true);
    expect(lexicons.validate(`${nsids.embedAudio}#view`, { ...view, loudness: -16 }).success).toBe(false);
    expect(lexicons.validate(`${nsids.embedAudio}#view`, { ...view, waveform: { ...view.waveform, version: 1 } }).success).toBe(false);
    expect(lexicons.validate(`${nsids.embedAudio}#view`, { ...view, waveform: { ...view.waveform, bits: 12 } }).success).toBe(false);
  });
});
