/**
 * What each kind of function may do in the blob bucket, by prefix and action rather than CDK's bucket-wide grants:
 * uploads are staged under staging/, then copied to their content address under blobs/; mp3 renditions sit under
 * renditions/. HeadObject and a copy's source are s3:GetObject; ListBucket makes a HEAD of a missing key a 404
 * rather than a 403. The store janitor's own grant is in the stack.
 */
import * as iam from "aws-cdk-lib/aws-iam";
import type * as s3 from "aws-cdk-lib/aws-s3";

export type BucketUse = "read" | "presign" | "upload" | "pass" | "rendition";

export function bucketAccessOf(bucket: s3.IBucket): Record<BucketUse, iam.PolicyStatement[]> {
  const objects = (actions: string[], ...prefixes: string[]) =>
    new iam.PolicyStatement({ actions, resources: prefixes.map((prefix) => bucket.arnForObjects(`${prefix}*`)) });
  const listBucket = new iam.PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] });
  const staging = objects(["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"], "staging/");
  return {
    // Playback reads an object's size and presigns a GET of an upload, a variant or its mp3 rendition.
    read: [listBucket, objects(["s3:GetObject"], "blobs/", "renditions/")],
    // Creating a direct upload presigns a POST into staging with the function's own credentials.
    presign: [objects(["s3:PutObject"], "staging/")],
    // An upload also takes back the copy at the content address that it could not record.
    upload: [listBucket, staging, objects(["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], "blobs/")],
    // A pass reads the post's bytes (Amazon Transcribe reads them as the caller) and stores a provider's variant.
    pass: [listBucket, staging, objects(["s3:GetObject", "s3:PutObject"], "blobs/")],
    // The rendition service also writes mp3 renditions, straight to their key.
    rendition: [
      listBucket,
      staging,
      objects(["s3:GetObject", "s3:PutObject"], "blobs/"),
      objects(["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"], "renditions/"),
    ],
  };
}
