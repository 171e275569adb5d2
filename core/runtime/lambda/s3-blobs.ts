import { configured } from "../../config/parse-config";
import type { PortLoader } from "./port-loader";

/** The Lambda blob port: S3. */
export const s3Blobs: PortLoader<"blobs"> = async (config) => {
  const blobs = configured(config.blobs, "SVC_BLOB_BUCKET");
  if (blobs.kind !== "s3") throw new Error("Lambda functions use S3: set SVC_BLOB_BUCKET, not SVC_BLOB_DIR");
  const { createS3BlobStore } = await import("../../blobs/s3-blob-store");
  return createS3BlobStore({ bucket: blobs.bucket });
};
