import { describe, expect, it } from "vitest";
import { requiredEnv } from "../../../test/support/config-env";
import { parseConfig } from "../../config/parse-config";
import { createLogger } from "../../observability/logger";
import type { Sql } from "../../sql/port";
import type { BlobStore } from "../../blobs/blob-store";
import { buildEnrichment } from "./build-enrichment";
import { composeEnrichment } from "./compose-enrichment";

const ports = (env: Record<string, string>) => ({
  config: parseConfig({ ...requiredEnv, ...env }, { error() {}, warn() {} }),
  // Building the port touches neither store.
  sql: {} as Sql,
  blobs: {} as BlobStore,
  logger: createLogger("silent"),
  now: () => new Date(),
});

describe("the dispatch-only enrichment port (create and PATCH on Lambda)", () => {
  it("dispatches as the full worker does for SQS, Cloud Tasks and off", () => {
    const queue = { PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/processing" };
    const tasks = { SVC_TASKS_LOCATION: "l", SVC_TASKS_QUEUE: "q", SVC_TASKS_WORKER_URL: "https://svc.example.com/api/v1/system/process-audio" };
    for (const env of [queue, tasks, {}]) {
      expect(composeEnrichment(ports(env)).dispatcher.mode).toBe(buildEnrichment(ports(env)).dispatcher.mode);
    }
  });

  it("refuses inline dispatch at startup, naming SVC_PROCESSING_INLINE, rather than never running the pass", () => {
    expect(buildEnrichment(ports({ SVC_PROCESSING_INLINE: "true" })).dispatcher.mode).toBe("inline");
    expect(() => composeEnrichment(ports({ SVC_PROCESSING_INLINE: "true" }))).toThrow(/SVC_PROCESSING_INLINE/);
  });
});
