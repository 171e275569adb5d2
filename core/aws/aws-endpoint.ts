import type { AwsEnvironment, AwsService } from "../config/aws-environment";

/**
 * Where a hand-signed call goes, found as the AWS SDK finds it, so the same variables point both at an emulator:
 * `AWS_ENDPOINT_URL_<SERVICE>` (`SSM`, `RDS_DATA`, `S3`), then `AWS_ENDPOINT_URL` (config/aws-environment.ts), then
 * AWS's own endpoint. `overridden` says which: S3 is then addressed path-style, as the SDK addresses an endpoint that
 * is an IP address.
 */
export const awsEndpoint = (environment: AwsEnvironment, service: AwsService, aws: string): { url: URL; overridden: boolean } => {
  const override = environment.endpoints[service];
  return override ? { url: new URL(override), overridden: true } : { url: new URL(aws), overridden: false };
};
