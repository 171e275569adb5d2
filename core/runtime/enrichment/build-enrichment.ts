/**
 * Composition of the full enrichment worker for a runtime: the dispatcher the configuration selects (inline, SQS,
 * Cloud Tasks or off), the pass's ports, and the enrichment port the write routes use. Used where passes run: the
 * Node host, the stage function, the system route. Functions that only dispatch use compose-enrichment.ts alone.
 */
import { createInlineDispatcher } from "../../processing/inline-dispatcher";
import type { Enrichment } from "../../processing/enrichment";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { composeEnrichment, type EnrichmentOverrides, type EnrichmentPorts } from "./compose-enrichment";

export type { EnrichmentOverrides } from "./compose-enrichment";

export const buildEnrichment = (ports: EnrichmentPorts, overrides: EnrichmentOverrides = {}): Enrichment & { sqs?: SQSClient } =>
  composeEnrichment(ports, overrides, (pass, track) => createInlineDispatcher(pass, track, overrides.inlineRetryDelaysMs));
