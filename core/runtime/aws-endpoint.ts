/**
 * Where a hand-signed call goes, found as the AWS SDK finds it, so the same variables point both at an emulator:
 * `AWS_ENDPOINT_URL_<SERVICE>` (`SSM`, `RDS_DATA`, `S3`), then `AWS_ENDPOINT_URL`, then AWS's own endpoint.
 * `overridden` says which: S3 is then addressed path-style, as the SDK addresses an endpoint that is an IP address.
 */
export const awsEndpoint = (env: NodeJS.ProcessEnv, service: "SSM" | "RDS_DATA" | "S3", aws: string): { url: URL; overridden: boolean } => {
  const override = env[`AWS_ENDPOINT_URL_${service}`] ?? env.AWS_ENDPOINT_URL;
  return override ? { url: new URL(override), overridden: true } : { url: new URL(aws), overridden: false };
};

/** The region a function runs in, as Lambda sets it. */
export const awsRegion = (env: NodeJS.ProcessEnv): string => env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
