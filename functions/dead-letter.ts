import { deadLetterHandler } from "../core/runtime/jobs/settle-jobs";
import { jobScopes } from "../core/runtime/lambda/function-scopes";
import { lambdaDeps } from "../core/runtime/lambda/lambda-deps";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql }, jobScopes.deadLetter);

/** The dead-letter queue's consumer: jobs the queue gave up on settle their pending stages failed (dead_letter). */
export const handler = deadLetterHandler(lambdaPorts);
