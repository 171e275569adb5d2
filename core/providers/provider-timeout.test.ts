/**
 * A provider that runs out of time on the stage's last attempt settles the stage `failed` with reason `timeout`
 * (docs/decisions.md, the stage table), not `provider_error`: through runPass, whose own signal ends at the same
 * deadline as the adapter's, against ElevenLabs and the rendition service played by local servers.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { type EnrichmentHarness, startEnrichmentHarness } from "../../test/support/enrichment-harness";
import { runPass } from "../processing/run-pass";

type Mode = "silent" | "trickle";

/** Never answers (`silent`), or answers 200 and then trickles whitespace forever (`trickle`). */
const startSlowProvider = async (mode: Mode) => {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (mode === "silent") return;
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"text":"hello"');
      const timer = setInterval(() => res.write(" "), 100);
      res.on("close", () => clearInterval(timer));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => (server.closeAllConnections(), new Promise<void>((r) => server.close(() => r()))),
  };
};

describe("a provider out of time on the last attempt", () => {
  const running: { close(): Promise<void> }[] = [];
  const harnesses = {} as Record<Mode, EnrichmentHarness>;
  beforeAll(async () => {
    for (const mode of ["silent", "trickle"] as const) {
      const provider = await startSlowProvider(mode);
      running.push(provider);
      harnesses[mode] = await startEnrichmentHarness(backends[0]!, {
        env: {
          ELEVENLABS_API_KEY: "xi-test-key",
          ELEVENLABS_BASE_URL: provider.url,
          SVC_TRANSCRIBER: "elevenlabs",
          SVC_RENDITION_SERVICE_URL: provider.url,
          SYSTEM_AUTH_TOKEN: "s".repeat(40),
        },
      });
      running.push(harnesses[mode]);
    }
  });
  afterAll(async () => {
    for (const r of running.reverse()) await r.close();
  });

  it("settles the stage failed (timeout), for ElevenLabs and the rendition service, whether no answer came or its body was still arriving", async () => {
    const cases = (["silent", "trickle"] as const).flatMap((mode) =>
      (["transcribe", "waveform"] as const).map((stage) => ({ mode, stage, label: `${stage} (${stage === "transcribe" ? "elevenlabs" : "rendition"}), ${mode}` })),
    );
    // Concurrently: a pass starts no stage within 5 s of its deadline, so each case waits that long and more.
    const settled = await Promise.all(
      cases.map(async ({ mode, stage, label }) => {
        const h = harnesses[mode];
        const post = await h.createAudioPost({ [stage]: true });
        const started = Date.now();
        await runPass(h.pass, { appId: "alpha", postId: post.postId }, { finalAttempt: true, deadline: Date.now() + 6500 });
        return { label, elapsed: Date.now() - started, state: (await h.stages(post.postId))[stage] };
      }),
    );
    for (const { label, elapsed, state } of settled) {
      expect(state, label).toMatchObject({ status: "failed", reason: "timeout" });
      // Ended by the deadline, not after it.
      expect(elapsed, label).toBeLessThan(9000);
    }
  }, 30_000);
});
