import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { lambdaDeps } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";
import { deadLetterHandler } from "../core/runtime/queue-handlers";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, enrichment: lambdaEnrichment });

/** The dead-letter queue's consumer: jobs the queue gave up on settle their pending stages failed (dead_letter). */
export const handler = deadLetterHandler(async () => ({ pass: (await lambdaPorts()).enrichment.pass }));
