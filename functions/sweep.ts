import { sweep } from "../core/processing/sweep";
import { lambdaDeps } from "../core/runtime/lambda";

/** The scheduled sweep (every 5 minutes on AWS): lapsed pending stages, and webhook events left undelivered. */
export const handler = async () => {
  const deps = await lambdaDeps();
  const { pass, dispatcher } = deps.enrichment;
  const result = await sweep({ sql: pass.sql, dispatcher, webhooks: deps.config.processing.webhooks, log: pass.log }, deps.now());
  deps.logger.info("sweep", { ...result });
  return result;
};
