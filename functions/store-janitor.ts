import { runStoreJanitor } from "../core/runtime/jobs/store-janitor-job";
import { jobScopes } from "../core/runtime/lambda/function-scopes";
import { lambdaDeps } from "../core/runtime/lambda/lambda-deps";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs }, jobScopes.storeJanitor);

/**
 * The scheduled sweep of the bucket for debris (hourly on AWS; docs/operations.md#debris-in-the-blob-store): stale
 * presigned uploads and staged objects, and originals and renditions no row references once they are old enough.
 * It only lists, reads the age of and deletes objects, so it is granted no more than that on the bucket.
 */
export const handler = async () => runStoreJanitor(await lambdaPorts());
