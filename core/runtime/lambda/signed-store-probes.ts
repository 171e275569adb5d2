import { configured } from "../../config/parse-config";
import type { PortLoader } from "./port-loader";

/** The Lambda store probes: one signed request to the Data API and one to S3, and neither SDK client in the bundle. */
export const signedStoreProbes: PortLoader<"storeProbes"> = async (config) => {
  const target = configured(config.database, "DATABASE_URL");
  const store = configured(config.blobs, "SVC_BLOB_BUCKET");
  if (target.kind !== "rds-data") throw new Error("Lambda functions use the RDS Data API: DATABASE_URL must be rds-data://");
  if (store.kind !== "s3") throw new Error("Lambda functions use S3: set SVC_BLOB_BUCKET, not SVC_BLOB_DIR");
  const [{ dataApiRecordsProbe }, { s3BlobsProbe }] = await Promise.all([import("../../aws/data-api-records-probe"), import("../../aws/s3-blobs-probe")]);
  const { resourceArn, secretArn, database, region } = target;
  return {
    records: dataApiRecordsProbe({ resourceArn, secretArn, database, ...(region && { region }) }, { aws: config.aws }),
    blobs: s3BlobsProbe(store.bucket, { aws: config.aws }),
  };
};
