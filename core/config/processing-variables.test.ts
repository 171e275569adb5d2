import { describe, expect, it } from "vitest";
import { requiredEnv } from "../../test/support/config-env";
import { selectProvider } from "../providers/select-provider";
import { parseConfig } from "./parse-config";
import { parseProcessingConfig, processingVariables } from "./processing-config";
import { readVariables } from "./read-variables";
import { configVariables } from "./variables";

const quiet = { error: () => {}, warn: () => {} };

describe("processing variables", () => {
  it("are read through the variable table's reader, like every other variable: each name read is a row", () => {
    const env = {
      SVC_PROCESSING_STUB: "false",
      SVC_TRANSCRIBER: "elevenlabs:scribe_v1",
      SVC_APP_DENOISERS: "alpha:rnnoise",
      SVC_APP_WEBHOOK_URLS: "alpha:https://hooks.example.com/x",
      SVC_APP_WEBHOOK_SECRETS: `alpha:${"s".repeat(32)}`,
      SVC_TASKS_LOCATION: "europe-west1",
    };
    const table = readVariables(env, () => undefined);
    const read: string[] = [];
    const config = parseProcessingConfig((name) => (read.push(name), table(name)), quiet);
    const rows = new Set(configVariables.map((row) => row.name));
    expect(read.filter((name) => !rows.has(name))).toEqual([]);
    const expected = [
      ...Object.values(processingVariables.defaults),
      ...Object.values(processingVariables.pins),
      "SVC_PROCESSING_STUB",
      "SVC_PROCESSING_INLINE",
      "SVC_APP_STT_MODELS",
      "SVC_APP_WEBHOOK_URLS",
      "SVC_APP_WEBHOOK_SECRETS",
      "SVC_TASKS_LOCATION",
      "PROCESSING_QUEUE_URL",
      "ELEVENLABS_API_KEY",
    ];
    expect(read).toEqual(expect.arrayContaining(expected));
    // The values come through the reader: what the table read is what the configuration holds.
    expect(config.defaults.transcribe).toEqual({ provider: "elevenlabs", model: "scribe_v1" });
    expect(config.tenantPins.denoise.get("alpha")).toEqual({ provider: "rnnoise" });
    expect(config.webhooks.get("alpha")?.url).toBe("https://hooks.example.com/x");
  });

  it("a transcription model longer than the transcript record's model field (128) is refused wherever it is set, so no stored record fails its lexicon", () => {
    const long = "m".repeat(129);
    const errors: string[] = [];
    const log = { warn: () => {}, error: (message: string) => void errors.push(message) };
    const config = parseProcessingConfig(
      readVariables({ SVC_APP_STT_MODELS: `alpha:${long},beta:${"m".repeat(128)}`, SVC_TRANSCRIBER: `elevenlabs:${long}`, SVC_APP_TRANSCRIBERS: `alpha:elevenlabs:${long}` }, () => undefined),
      log,
    );
    expect(config.tenantSttModels.has("alpha")).toBe(false);
    expect(config.tenantSttModels.get("beta")).toHaveLength(128);
    expect(config.defaults.transcribe).toEqual({ provider: `elevenlabs:${long}` });
    // Kept as the default is: a well-formed entry naming no provider makes that tenant's stage misconfigured.
    expect(config.tenantPins.transcribe.get("alpha")).toEqual({ provider: `elevenlabs:${long}` });
    expect(errors).toHaveLength(3);
    expect(errors.every((message) => message.includes("128"))).toBe(true);
    for (const name of ["SVC_PLATFORM_STT_MODEL", "ELEVENLABS_STT_MODEL"]) {
      const problems: string[] = [];
      readVariables({ [name]: long }, (variable, message) => void problems.push(`${variable}: ${message}`))(name as "ELEVENLABS_STT_MODEL");
      expect(problems.filter((problem) => problem.startsWith(`${name}:`)), name).toEqual([expect.stringContaining("at most 128 characters")]);
    }
  });

  it.each([
    ["aws_transcribe", "aws_transcribe"],
    ["ElevenLabs", "ElevenLabs"],
    ["Eleven Labs", "Eleven Labs"],
    ["stub:<a 129-character model>", `stub:${"m".repeat(129)}`],
  ])(
    "a well-formed tenant pin naming an unknown provider (%s) is provider_misconfigured for that tenant only, logged at error level, with no fallback to the deployment default",
    (_label, value) => {
      const errors: string[] = [];
      const log = { warn: () => {}, error: (message: string) => void errors.push(message) };
      const env = { ...requiredEnv, ELEVENLABS_API_KEY: "xi-key", SVC_TRANSCRIBER: "elevenlabs", SVC_APP_TRANSCRIBERS: `acme:${value},beta:stub` };
      const config = parseConfig(env, log);
      expect(errors).toEqual([expect.stringContaining('SVC_APP_TRANSCRIBERS: tenant "acme" is not provider or provider:model')]);
      expect(selectProvider("transcribe", "acme", config, log)).toEqual({ ok: false, reason: "provider_misconfigured" });
      expect(errors.at(-1)).toContain('unavailable for tenant "acme"');
      expect(selectProvider("transcribe", "beta", config, quiet)).toEqual({ ok: true, provider: "stub" });
      expect(selectProvider("transcribe", "gamma", config, quiet)).toMatchObject({ ok: true, provider: "elevenlabs" });
    },
  );

  it.each(["AWS-Transcribe", "aws_transcribe", "transcribe", "elevenlabs"])(
    "SVC_PLATFORM_TRANSCRIBER other than aws-transcribe (%s) is refused at start, naming the variable, never passed over for the external provider unseen",
    (value) => {
      expect(() => parseConfig({ ...requiredEnv, SVC_PLATFORM_TRANSCRIBER: value }, quiet)).toThrow(/SVC_PLATFORM_TRANSCRIBER must be aws-transcribe/);
      expect(parseConfig({ ...requiredEnv, SVC_PLATFORM_TRANSCRIBER: " aws-transcribe " }, quiet).processing.platformTranscriber).toBe("aws-transcribe");
    },
  );

  it("whitespace-only values are unset, as for every row", () => {
    const config = parseProcessingConfig(readVariables({ SVC_TRANSCRIBER: "   ", SVC_APP_WEBHOOK_URLS: " \t " }, () => undefined), quiet);
    expect(config.defaults.transcribe).toBeUndefined();
    expect(config.webhooks.size).toBe(0);
  });
  it("leases last 60 s past their last heartbeat, renewed every 20 s, and the host sweeps every 30 s unless set; a heartbeat over a third of the lease is lowered to that", () => {
    const parse = (env: Record<string, string>, log: Parameters<typeof parseProcessingConfig>[1] = quiet) => parseProcessingConfig(readVariables(env, () => undefined), log);
    const defaults = parse({});
    expect(defaults.lease).toEqual({ ms: 60_000, heartbeatMs: 20_000 });
    expect(defaults.sweepIntervalMs).toBe(30_000);
    expect(parse({ SVC_LEASE_MS: "3000", SVC_LEASE_HEARTBEAT_MS: "500", SVC_SWEEP_INTERVAL_MS: "250" })).toMatchObject({ lease: { ms: 3000, heartbeatMs: 500 }, sweepIntervalMs: 250 });
    const errors: string[] = [];
    expect(parse({ SVC_LEASE_MS: "3000", SVC_LEASE_HEARTBEAT_MS: "2000" }, { warn: () => {}, error: (message: string) => void errors.push(message) }).lease).toEqual({ ms: 3000, heartbeatMs: 1000 });
    expect(errors).toEqual([expect.stringContaining("SVC_LEASE_HEARTBEAT_MS")]);
  });
});
