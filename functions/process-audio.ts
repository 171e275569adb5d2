import { DomainError } from "../core/domain-error";
import { implement } from "../core/http/route-call";
import { runPass } from "../core/processing/run-pass";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

/**
 * The task queue's worker URL (CONTRACT.md section 12): runs one pass. 200 `{ ran }` when it ran or had nothing
 * to do; 503 when the caller must retry (another pass holds the lease, a provider asked to retry, a store is down).
 */
const impl = implement(routes.processAudio, async (call) => {
  const { pass } = call.deps.enrichment;
  const outcome = await runPass({ ...pass, sql: call.sql, log: call.log }, call.body);
  if (outcome.kind !== "done") throw new DomainError("SERVICE_UNAVAILABLE", "processing must be retried later");
  return { data: { ran: outcome.ran } };
});

export default impl;
export const handler = lambda(impl);
