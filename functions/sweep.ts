import type { Context } from "aws-lambda";
import type { Dispatcher } from "../core/processing/dispatcher";
import { durableDispatcher } from "../core/runtime/enrichment/compose-enrichment";
import { runSweep } from "../core/runtime/jobs/settle-jobs";
import { jobScopes } from "../core/runtime/lambda/function-scopes";
import { lambdaDeps } from "../core/runtime/lambda/lambda-deps";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql }, jobScopes.sweep);
let dispatcher: Dispatcher | undefined;

/**
 * The scheduled sweep (every five minutes on AWS): lapsed pending stages are dispatched again through the queue, and
 * webhook events left undelivered or due for another round are delivered (those past the give-up age are given up,
 * logged once). It runs no pass, so it carries no providers.
 */
export const handler = async (_event: unknown, context: Pick<Context, "getRemainingTimeInMillis">) => {
  const deps = await lambdaPorts();
  dispatcher ??= durableDispatcher(deps.config).dispatcher;
  // Within the function's own time (60 s): killed mid-send, it would leave marks unsent (core/processing/sweep.ts).
  return runSweep(deps, dispatcher, () => context.getRemainingTimeInMillis());
};
