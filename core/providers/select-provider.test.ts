import { describe, expect, it } from "vitest";
import { requiredEnv as base } from "../../test/support/config-env";
import { parseConfig } from "../config/parse-config";
import type { Stage } from "./provider-port";
import { providerCatalog } from "./provider-catalog";
import type { ProviderEntry, ProviderFactories } from "./provider-entry";
import { providerRegistry } from "./provider-registry";
import { selectProvider, type Selection } from "./select-provider";

const s3 = { SVC_BLOB_DIR: "", SVC_BLOB_BUCKET: "bucket" };
const platform = { ...s3, SVC_PLATFORM_TRANSCRIBER: "aws-transcribe" };
const elevenlabs = { ELEVENLABS_API_KEY: "xi-key" };
const rendition = { SVC_RENDITION_SERVICE_URL: "http://127.0.0.1:3001", SYSTEM_AUTH_TOKEN: "s".repeat(32) };

// The contract's provider table with an adapter for every stage it lists, so every rule can be exercised
// whatever adapters this build ships.
const fake = () => ({}) as never;
const registry: ProviderEntry[] = providerRegistry.map((entry) => ({
  ...entry,
  adapters: Object.fromEntries(entry.stages.map((stage) => [stage, fake])) as ProviderFactories,
}));

interface Rule {
  rule: string;
  env: Record<string, string>;
  stage: Stage;
  appId?: string;
  expected: Selection;
  logs?: "error" | "warn";
}

const run = (p: string, model?: string): Selection => (model ? { ok: true, provider: p, model } : { ok: true, provider: p });
const skip = (reason: "no_provider" | "provider_misconfigured"): Selection => ({ ok: false, reason });

const rules: Rule[] = [
  { rule: "with nothing configured a stage has no provider (stub is never a fallback)", env: {}, stage: "transcribe", expected: skip("no_provider") },
  { rule: "with nothing configured trim has no provider", env: {}, stage: "trim", expected: skip("no_provider") },
  { rule: "the platform transcriber is preferred when its binding exists", env: { ...platform, ...elevenlabs }, stage: "transcribe", expected: run("aws-transcribe") },
  { rule: "the platform transcriber needs the S3 store", env: { SVC_PLATFORM_TRANSCRIBER: "aws-transcribe", ...elevenlabs }, stage: "transcribe", expected: run("elevenlabs") },
  { rule: "an external provider is enabled by its API key", env: elevenlabs, stage: "denoise", expected: run("elevenlabs") },
  { rule: "rnnoise is reachable only by name", env: rendition, stage: "denoise", expected: skip("no_provider") },
  { rule: "rnnoise named, with the rendition service configured", env: { ...rendition, SVC_DENOISER: "rnnoise" }, stage: "denoise", expected: run("rnnoise") },
  { rule: "trim runs in the rendition service", env: rendition, stage: "trim", expected: run("rendition") },
  { rule: "waveform runs in the rendition service", env: rendition, stage: "waveform", expected: run("rendition") },
  { rule: "normalize runs in the rendition service", env: rendition, stage: "normalize", expected: run("rendition") },
  { rule: "without the rendition service normalize has no provider", env: elevenlabs, stage: "normalize", expected: skip("no_provider") },
  { rule: "SVC_NORMALIZER names the stub", env: { ...rendition, SVC_NORMALIZER: "stub" }, stage: "normalize", expected: run("stub") },
  { rule: "SVC_APP_NORMALIZERS pins a tenant's normalizer", env: { ...rendition, SVC_APP_NORMALIZERS: "alpha:stub" }, stage: "normalize", expected: run("stub") },
  { rule: "SVC_PROCESSING_STUB gives normalize the stub", env: { SVC_PROCESSING_STUB: "true" }, stage: "normalize", expected: run("stub") },
  { rule: "the rendition service URL requires SYSTEM_AUTH_TOKEN (logged at error level)", env: { SVC_RENDITION_SERVICE_URL: "http://127.0.0.1:3001" }, stage: "waveform", expected: skip("no_provider"), logs: "error" },
  { rule: "stub is reachable by naming it as the deployment default", env: { SVC_TRIMMER: "stub" }, stage: "trim", expected: run("stub") },
  { rule: "the deployment default wins over the first available", env: { ...platform, ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs" }, stage: "transcribe", expected: run("elevenlabs") },
  {
    rule: "a default naming a provider that is not configured is a misconfiguration, with no fallback",
    env: { ...platform, SVC_TRANSCRIBER: "elevenlabs" },
    stage: "transcribe",
    expected: skip("provider_misconfigured"),
    logs: "error",
  },
  { rule: "a default naming an unknown provider is a misconfiguration", env: { ...rendition, SVC_WAVEFORM: "magic" }, stage: "waveform", expected: skip("provider_misconfigured"), logs: "error" },
  { rule: "a default naming a provider that cannot run the stage is a misconfiguration", env: { ...elevenlabs, SVC_TRIMMER: "elevenlabs" }, stage: "trim", expected: skip("provider_misconfigured"), logs: "error" },
  { rule: "a malformed default is a misconfiguration", env: { ...rendition, SVC_TRIMMER: "Not A Name" }, stage: "trim", expected: skip("provider_misconfigured"), logs: "error" },
  { rule: "the tenant pin wins over the deployment default", env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs", SVC_APP_TRANSCRIBERS: "alpha:stub" }, stage: "transcribe", expected: run("stub") },
  { rule: "another tenant's pin does not apply", env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs", SVC_APP_TRANSCRIBERS: "beta:stub" }, stage: "transcribe", expected: run("elevenlabs") },
  {
    rule: "a bad tenant pin affects that tenant, with no fallback to the deployment default",
    env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs", SVC_APP_TRANSCRIBERS: "alpha:aws-transcribe,beta:stub" },
    stage: "transcribe",
    expected: skip("provider_misconfigured"),
    logs: "error",
  },
  {
    rule: "a bad tenant pin affects only that tenant",
    env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs", SVC_APP_TRANSCRIBERS: "alpha:aws-transcribe,beta:stub" },
    stage: "transcribe",
    appId: "beta",
    expected: run("stub"),
  },
  {
    rule: "a malformed pin entry is dropped with a log and the other entries survive",
    env: { SVC_APP_WAVEFORMS: "garbage,beta:stub,alpha:Bad Name" },
    stage: "waveform",
    appId: "beta",
    expected: run("stub"),
    logs: "error",
  },
  { rule: "a tenant whose malformed entry was dropped has no pin", env: { SVC_APP_WAVEFORMS: "beta:stub,alpha:" }, stage: "waveform", expected: skip("no_provider"), logs: "error" },
  {
    rule: "a well-formed tenant pin naming no provider (capitals, a space) is that tenant's misconfiguration, with no fallback",
    env: { ...rendition, SVC_APP_WAVEFORMS: "beta:stub,alpha:Bad Name" },
    stage: "waveform",
    expected: skip("provider_misconfigured"),
    logs: "error",
  },
  { rule: "a deployment value may pin a model", env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs:scribe_v2" }, stage: "transcribe", expected: run("elevenlabs", "scribe_v2") },
  {
    rule: "the tenant model pin wins over the deployment value's model",
    env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs:scribe_v2", SVC_APP_STT_MODELS: "alpha:scribe_x" },
    stage: "transcribe",
    expected: run("elevenlabs", "scribe_x"),
  },
  {
    rule: "a tenant pin's model wins over the deployment value's model",
    env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs:scribe_v2", SVC_APP_TRANSCRIBERS: "alpha:elevenlabs:scribe_t" },
    stage: "transcribe",
    expected: run("elevenlabs", "scribe_t"),
  },
  {
    rule: "the deployment value's model wins over the provider's model variable",
    env: { ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs:scribe_v2", ELEVENLABS_STT_MODEL: "scribe_v1" },
    stage: "transcribe",
    expected: run("elevenlabs", "scribe_v2"),
  },
  { rule: "ELEVENLABS_STT_MODEL overrides the external transcriber's default model", env: { ...elevenlabs, ELEVENLABS_STT_MODEL: "scribe_v1" }, stage: "transcribe", expected: run("elevenlabs", "scribe_v1") },
  { rule: "SVC_PLATFORM_STT_MODEL overrides the platform transcriber's default model", env: { ...platform, SVC_PLATFORM_STT_MODEL: "general" }, stage: "transcribe", expected: run("aws-transcribe", "general") },
  { rule: "with no model pinned the provider's default model applies", env: elevenlabs, stage: "transcribe", expected: run("elevenlabs") },
  {
    rule: "a deployment model pinned for another provider does not apply",
    env: { ...elevenlabs, ...platform, SVC_TRANSCRIBER: "elevenlabs:scribe_v2", SVC_APP_TRANSCRIBERS: "alpha:aws-transcribe" },
    stage: "transcribe",
    expected: run("aws-transcribe"),
  },
  { rule: "a model pin on a stage without models is ignored (logged at warn level)", env: { SVC_DENOISER: "stub:fancy" }, stage: "denoise", expected: run("stub"), logs: "warn" },
  { rule: "a tenant pin's model on a stage without models is ignored (logged at warn level)", env: { SVC_APP_DENOISERS: "alpha:stub:fancy" }, stage: "denoise", expected: run("stub"), logs: "warn" },
  { rule: "SVC_APP_STT_MODELS does not apply to other stages", env: { SVC_WAVEFORM: "stub", SVC_APP_STT_MODELS: "alpha:m" }, stage: "waveform", expected: run("stub") },
  {
    rule: "SVC_PROCESSING_STUB=true overrides every provider setting, API keys included",
    env: { ...platform, ...elevenlabs, SVC_PROCESSING_STUB: "true", SVC_TRANSCRIBER: "elevenlabs:scribe_v2", SVC_APP_TRANSCRIBERS: "alpha:aws-transcribe", SVC_APP_STT_MODELS: "alpha:m" },
    stage: "transcribe",
    expected: run("stub"),
  },
  { rule: "SVC_PROCESSING_STUB=true gives every stage a provider", env: { SVC_PROCESSING_STUB: "true", SVC_TRIMMER: "magic" }, stage: "trim", expected: run("stub") },
];

describe("provider selection per stage and tenant (docs/decisions.md#providers)", () => {
  it.each(rules)("$rule", ({ env, stage, appId, expected, logs }) => {
    const logged = { error: [] as string[], warn: [] as string[] };
    const log = { error: (m: string) => void logged.error.push(m), warn: (m: string) => void logged.warn.push(m) };
    const config = parseConfig({ ...base, ...env }, log);
    expect(selectProvider(stage, appId ?? "alpha", config, log, registry)).toEqual(expected);
    if (logs === "error") expect(logged.error.length).toBeGreaterThan(0);
    else if (logs === "warn") expect(logged.warn.length).toBeGreaterThan(0);
    else expect([...logged.error, ...logged.warn]).toEqual([]);
  });

  it("a named provider whose adapter is not in this build is a misconfiguration, logged at error level", () => {
    const errors: string[] = [];
    const log = { error: (m: string) => void errors.push(m), warn: () => {} };
    const config = parseConfig({ ...base, ...elevenlabs, SVC_TRANSCRIBER: "elevenlabs" }, log);
    const without = registry.map((e) => (e.name === "elevenlabs" ? { ...e, adapters: {} } : e));
    expect(selectProvider("transcribe", "alpha", config, log, without)).toEqual(skip("provider_misconfigured"));
    expect(errors.join()).toMatch(/adapter/);
  });

  it("request-time planning (the catalog, no adapters) chooses as the worker does (the registry), for every rule above", () => {
    for (const { env, stage, appId } of rules) {
      const config = parseConfig({ ...base, ...env }, { error() {}, warn() {} });
      const quiet = { error() {} };
      expect(selectProvider(stage, appId ?? "alpha", config, quiet, providerCatalog)).toEqual(
        selectProvider(stage, appId ?? "alpha", config, quiet, providerRegistry),
      );
    }
  });

  it("the registry is the catalog, in its order, with an adapter for every stage each provider lists", () => {
    expect(providerRegistry.map(({ adapters, ...info }) => info)).toEqual(providerCatalog);
    for (const entry of providerRegistry) expect(Object.keys(entry.adapters).sort()).toEqual([...entry.stages].sort());
  });
});
