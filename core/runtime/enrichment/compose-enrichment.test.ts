import { describe, expect, it } from "vitest";
import { requiredEnv } from "../../../test/support/config-env";
import { parseConfig } from "../../config/parse-config";
import { createLogger } from "../../observability/logger";
import type { Sql } from "../../sql/port";
import type { BlobStore } from "../../blobs/blob-store";
import { createInlineDispatcher } from "../../processing/inline-dispatcher";
import { composeEnrichment } from "./compose-enrichment";
import { composeWorker } from "./compose-worker";

const ports = (env: Record<string, string>) => ({
  config: parseConfig({ ...requiredEnv, ...env }, { error() {}, warn() {} }),
  // Building the ports touches neither store.
  sql: {} as Sql,
  blobs: {} as BlobStore,
  logger: createLogger("silent"),
  now: () => new Date(),
});

describe("the dispatch-only enrichment port (create and PATCH on Lambda)", () => {
  it("dispatches as the Node host's, which has a worker, does for SQS, Cloud Tasks and off", () => {
    const queue = { PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/processing" };
    const tasks = { SVC_TASKS_LOCATION: "l", SVC_TASKS_QUEUE: "q", SVC_TASKS_WORKER_URL: "https://svc.example.com/api/v1/system/process-audio" };
    for (const env of [queue, tasks, {}]) {
      const withWorker = composeEnrichment(ports(env), {}, (track) => createInlineDispatcher(composeWorker(ports(env)), track));
      expect(composeEnrichment(ports(env)).dispatcher.mode).toBe(withWorker.dispatcher.mode);
    }
  });

  it("refuses inline dispatch at startup, naming SVC_PROCESSING_INLINE, rather than never running the pass", () => {
    const inline = ports({ SVC_PROCESSING_INLINE: "true" });
    expect(composeEnrichment(inline, {}, (track) => createInlineDispatcher(composeWorker(inline), track)).dispatcher.mode).toBe("inline");
    expect(() => composeEnrichment(inline)).toThrow(/SVC_PROCESSING_INLINE/);
  });
});
