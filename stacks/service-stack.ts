import { createRequire } from "node:module";
import path from "node:path";
import { routeMethods } from "../core/http/route";
import { Duration, Fn, RemovalPolicy } from "aws-cdk-lib";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as iam from "aws-cdk-lib/aws-iam";
import * as lambda from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import * as rds from "aws-cdk-lib/aws-rds";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { useProject } from "sst/project.js";
import { Api, Config, Cron, Function, Queue, Script, type StackContext } from "sst/constructs";
import type { VariableScope } from "../core/config/variable-scopes";
import { variablesOf } from "../core/config/variables";
import { jobScopes, routeScopes } from "../core/runtime/lambda/function-scopes";
import { routeList } from "../functions/routes";
import { deployedScriptName } from "../core/openapi/reference-script-file";
import { bucketAccessOf, type BucketUse } from "./bucket-access";
import { ffmpegArm64LayerDir, ffmpegLayerPath } from "./ffmpeg-layer";
import { stageParameters } from "./stage-parameters";

/** API functions answer within API Gateway's 30 s; most in far less. */
export const apiTimeoutSeconds = 10;
/** Routes that stream a whole upload from S3 or render an mp3 on demand. */
const longRouteFiles = new Set(["complete-upload", "get-audio"]);
const dataApiActions = ["rds-data:ExecuteStatement", "rds-data:BeginTransaction", "rds-data:CommitTransaction", "rds-data:RollbackTransaction"];
/** Routes whose only use of the bucket is presigning a direct upload into staging (they call S3 for nothing). */
const presigningRouteFiles = new Set(["create-upload"]);
const longApiTimeoutSeconds = 29;
/** The stage function runs a whole processing pass (docs/decisions.md#dispatch-and-the-worker). */
export const stageTimeoutSeconds = 900;
/** AWS's advice for SQS event sources: six times the function timeout, so a running pass is never redelivered. */
export const processingVisibilitySeconds = 6 * stageTimeoutSeconds;
export const processingMaxReceives = 3;
/** The dead-letter consumer settles one job in a statement or two. */
const deadLetterTimeoutSeconds = 60;
export const stagingPrefix = "staging/";
/** Orphans must be an hour old before they go (SVC_ORPHAN_MIN_AGE_MS): an hourly sweep finds them soon enough. */
export const storeJanitorSchedule = "rate(1 hour)";
/** Listing a large bucket and checking each old object's row takes a while; the next run picks up where this stopped. */
const storeJanitorTimeoutSeconds = 900;
export const databaseName = "svc";

/** Files a route reads beside its bundle: the reference page's script (4.3 MB) stays out of the JavaScript bundle. */
const routeFiles = (root: string): Record<string, { from: string; to: string }[]> => {
  const scalar = path.dirname(createRequire(import.meta.url).resolve("@scalar/api-reference"));
  return { "reference-script": [{ from: path.relative(root, path.join(scalar, "browser/standalone.js")), to: deployedScriptName }] };
};

/** Values the service reads as secrets: SST Config secrets, set per stage with `sst secrets set`. */
export const secretNames = [
  "SVC_APP_TOKENS",
  "SVC_APP_WEBHOOK_SECRETS",
  "SVC_PLAYBACK_SIGNING_KEY",
  "SYSTEM_AUTH_TOKEN",
  "ELEVENLABS_API_KEY",
] as const;
type SecretName = (typeof secretNames)[number];

/**
 * The whole deployment (docs/decisions.md#aws-deployment): Aurora Serverless v2 behind the Data API, the blob bucket, the
 * processing queue with its dead-letter queue, one Lambda per route of the route table behind an HTTP API (no CORS,
 * a catch-all answering the envelope 404), the stage, dead-letter, sweep and store janitor functions, the rendition
 * service behind a function URL, and a migration step every other function waits for.
 */
export function ServiceStack({ app, stack }: StackContext) {
  const parameters = stageParameters(app.stage);

  // Aurora PostgreSQL Serverless v2 with the Data API. Functions stay outside the VPC and reach it over HTTPS.
  // A VPC of two isolated subnets in the region's first two zones, resolved by CloudFormation (Fn::GetAZs): the
  // ec2.Vpc construct would look the zones up in the account at every synth, which `sst build` cannot do offline.
  const network = new ec2.CfnVPC(stack, "DatabaseVpc", { cidrBlock: "10.42.0.0/16", enableDnsHostnames: true, enableDnsSupport: true });
  const zones = [0, 1].map((i) => Fn.select(i, Fn.getAzs()));
  const subnets = zones.map(
    (zone, i) => new ec2.CfnSubnet(stack, `DatabaseSubnet${i + 1}`, { vpcId: network.ref, cidrBlock: `10.42.${i}.0/24`, availabilityZone: zone }),
  );
  const vpc = ec2.Vpc.fromVpcAttributes(stack, "DatabaseNetwork", {
    vpcId: network.ref,
    vpcCidrBlock: network.attrCidrBlock,
    availabilityZones: zones,
    isolatedSubnetIds: subnets.map((subnet) => subnet.ref),
  });
  const cluster = new rds.DatabaseCluster(stack, "Database", {
    engine: rds.DatabaseClusterEngine.auroraPostgres({ version: rds.AuroraPostgresEngineVersion.VER_16_6 }),
    writer: rds.ClusterInstance.serverlessV2("writer"),
    serverlessV2MinCapacity: 0,
    serverlessV2MaxCapacity: 4,
    enableDataApi: true,
    parameters: { statement_timeout: parameters.statementTimeoutMs },
    defaultDatabaseName: databaseName,
    credentials: rds.Credentials.fromGeneratedSecret("svc_admin"),
    storageEncrypted: true,
    vpc,
    vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
    removalPolicy: app.stage === "production" ? RemovalPolicy.SNAPSHOT : RemovalPolicy.DESTROY,
  });
  const databaseUrl = `rds-data://${databaseName}?resourceArn=${cluster.clusterArn}&secretArn=${cluster.secret!.secretArn}&region=${stack.region}`;

  const bucket = new s3.Bucket(stack, "Blobs", {
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    lifecycleRules: [
      { id: "expire-staged-uploads", prefix: stagingPrefix, expiration: Duration.days(1), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      // An mp3 rendition is uploaded straight to its key, in parts when large: a function cut off mid-upload leaves
      // parts that no listing shows and the janitor cannot see.
      { id: "abort-incomplete-uploads", abortIncompleteMultipartUploadAfter: Duration.days(1) },
    ],
  });

  const secrets = Object.fromEntries(secretNames.map((name) => [name, new Config.Secret(stack, name)])) as Record<
    SecretName,
    Config.Secret
  >;
  // Optional parameters left empty stay unbound (SSM holds no empty values): the variable is simply unset.
  const parameter = (name: string, value: string) => (value ? new Config.Parameter(stack, name, { value }) : undefined);
  const pdsHost = parameter("SVC_PDS_HOST", parameters.pdsHost)!;
  const appDids = parameter("SVC_APP_DIDS", parameters.appDids);
  const webhookUrls = parameter("SVC_APP_WEBHOOK_URLS", parameters.webhookUrls);

  const transcribe = new iam.PolicyStatement({
    actions: ["transcribe:StartTranscriptionJob", "transcribe:GetTranscriptionJob", "transcribe:DeleteTranscriptionJob"],
    resources: ["*"],
  });

  const ffmpeg = new lambda.LayerVersion(stack, "FfmpegArm64", {
    code: lambda.Code.fromAsset(ffmpegArm64LayerDir(useProject().paths.root)),
    compatibleArchitectures: [lambda.Architecture.ARM_64],
    description: "ffmpeg (linux arm64) from @ffmpeg-installer/linux-arm64",
  });
  const rendition = new Function(stack, "Rendition", {
    handler: "functions/rendition.handler",
    // RNNoise's WebAssembly is loaded from beside the module that imports it (`new URL("rnnoise.wasm",
    // import.meta.url)`), which in the bundle is functions/rendition.mjs; esbuild does not copy it.
    copyFiles: [{ from: "node_modules/@echogarden/rnnoise-wasm/rnnoise.wasm", to: "functions/rnnoise.wasm" }],
    timeout: 300,
    memorySize: 2048,
    diskSize: 2048,
    layers: [ffmpeg],
    url: { authorizer: "none", cors: false },
  });

  const deadLetters = new sqs.Queue(stack, "ProcessingDeadLetters", {
    retentionPeriod: Duration.days(14),
    // Lambda refuses an event source whose visibility timeout is below the function's timeout (SQS's default is 30 s).
    visibilityTimeout: Duration.seconds(6 * deadLetterTimeoutSeconds),
    encryption: sqs.QueueEncryption.SQS_MANAGED,
  });
  const queue = new Queue(stack, "Processing", {
    cdk: {
      queue: {
        visibilityTimeout: Duration.seconds(processingVisibilitySeconds),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: processingMaxReceives },
      },
    },
  });

  /**
   * What this deployment sets, per variable of the table (core/config/variables.ts): a value, or the SST Config
   * secret or parameter bound in its place. SVC_PUBLIC_BASE_URL joins once the API exists.
   */
  const deployment: Record<string, string | Config.Secret | Config.Parameter | undefined> = {
    NODE_ENV: "production",
    LOG_LEVEL: parameters.logLevel,
    CLIENT_IP_SOURCE: "edge",
    SVC_GIT_SHA: parameters.gitSha,
    SVC_DEPLOYED_AT: parameters.deployedAt,
    DATABASE_URL: databaseUrl,
    SVC_BLOB_BUCKET: bucket.bucketName,
    SVC_PDS_HOST: pdsHost,
    SVC_APP_DIDS: appDids,
    SVC_APP_WEBHOOK_URLS: webhookUrls,
    ...secrets,
    PROCESSING_QUEUE_URL: queue.queueUrl,
    SVC_RENDITION_SERVICE_URL: rendition.url!,
    SVC_PLATFORM_TRANSCRIBER: "aws-transcribe",
    FFMPEG_PATH: ffmpegLayerPath,
    // The operator's settings (rate limits, providers, timeouts, the lease, webhook retries, the orphan age), each
    // given as a plain value to the functions of its scopes.
    ...parameters.settings,
  };

  const bucketAccess = bucketAccessOf(bucket);

  /**
   * Gives a function the variables of its scopes that this deployment sets (by the variable table, so exactly what
   * its configuration reads) and the permissions of its scopes, and nothing more.
   */
  const wire = (fn: Function, scopes: readonly VariableScope[], { blobs = "upload" as BucketUse } = {}) => {
    const own = new Set(variablesOf(scopes).map((row) => row.name));
    const bind: (Config.Secret | Config.Parameter)[] = [];
    for (const [name, value] of Object.entries(deployment)) {
      if (!own.has(name) || value === undefined) continue;
      if (typeof value === "string") fn.addEnvironment(name, value);
      else bind.push(value);
    }
    if (bind.length) fn.bind(bind);
    if (scopes.includes("sql")) {
      // The statements and transactions the adapter sends (core/sql/rds-data.ts), not BatchExecuteStatement.
      fn.attachPermissions([new iam.PolicyStatement({ actions: dataApiActions, resources: [cluster.clusterArn] })]);
      cluster.secret!.grantRead(fn);
    }
    if (scopes.includes("janitor")) {
      // The janitor lists, reads an object's age (HeadObject is s3:GetObject) and deletes: it writes nothing.
      fn.attachPermissions([
        new iam.PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }),
        new iam.PolicyStatement({ actions: ["s3:GetObject", "s3:DeleteObject"], resources: [bucket.arnForObjects("*")] }),
      ]);
    } else if (scopes.includes("rendition-service")) fn.attachPermissions(bucketAccess.rendition);
    else if (scopes.includes("blobs")) fn.attachPermissions(bucketAccess[scopes.includes("stages") ? "pass" : blobs]);
    if (scopes.includes("probes")) {
      // Exactly what the two probe requests need: ExecuteStatement with the cluster's secret, and a bucket listing.
      fn.attachPermissions([
        new iam.PolicyStatement({ actions: ["rds-data:ExecuteStatement"], resources: [cluster.clusterArn] }),
        new iam.PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }),
      ]);
      cluster.secret!.grantRead(fn);
    }
    // A dispatcher sends to the queue URL it is given: it needs neither its attributes nor its URL looked up.
    if (scopes.includes("dispatch")) fn.attachPermissions([new iam.PolicyStatement({ actions: ["sqs:SendMessage"], resources: [queue.queueArn] })]);
    if (scopes.includes("stages")) {
      fn.attachPermissions([transcribe]);
      // A pass may re-encode a provider's output (ElevenLabs isolation) into the upload's family: it needs ffmpeg too.
      fn.addLayers(ffmpeg);
    }
    return fn;
  };

  // Every function waits for the migrations of its own deploy, so new code never meets an old schema.
  const migrate = new Function(stack, "Migrate", {
    handler: "functions/migrate.handler",
    timeout: 900,
    nodejs: { loader: { ".sql": "text" } },
  });
  const migration = new Script(stack, "Migrations", { onCreate: migrate, onUpdate: migrate });
  migration.node.addDependency(cluster);
  const afterMigrations = (fn: Function) => fn.node.addDependency(migration);

  const stage = new Function(stack, "Stage", { handler: "functions/process-queue.handler", timeout: stageTimeoutSeconds });
  queue.addConsumer(stack, { function: stage, cdk: { eventSource: { batchSize: 1, reportBatchItemFailures: true } } });

  const deadLetter = new Function(stack, "DeadLetter", { handler: "functions/dead-letter.handler", timeout: deadLetterTimeoutSeconds });
  deadLetter.addEventSource(new SqsEventSource(deadLetters, { batchSize: 1 }));

  const sweep = new Cron(stack, "Sweep", {
    // The contract's five minutes: with 60 s leases a dead pass's stages go out again within about six.
    schedule: "rate(5 minutes)",
    job: { function: { handler: "functions/sweep.handler", timeout: 60 } },
  });
  const storeJanitor = new Cron(stack, "StoreJanitor", {
    schedule: storeJanitorSchedule,
    job: { function: { handler: "functions/store-janitor.handler", timeout: storeJanitorTimeoutSeconds } },
  });

  const routeFunctions = new Map<string, Function>();
  const routeKeys = routeList.flatMap((route) =>
    routeMethods(route).map((method) => ({ key: `${method} ${route.path}`, route })),
  );
  const api = new Api(stack, "Api", {
    cors: false,
    routes: {
      ...Object.fromEntries(
        routeKeys.map(({ key, route }) => [
          key,
          { function: { handler: `functions/${route.file}.handler`, copyFiles: routeFiles(useProject().paths.root)[route.file] } },
        ]),
      ),
      // Unknown paths get the service's envelope 404, not API Gateway's own.
      $default: "functions/not-found.handler",
    },
    defaults: { function: { timeout: apiTimeoutSeconds } },
  });
  deployment.SVC_PUBLIC_BASE_URL = api.url;
  for (const { key, route } of routeKeys) {
    const fn = api.getFunction(key)!;
    routeFunctions.set(key, fn);
    wire(fn, routeScopes(route), { blobs: route.method === "GET" ? "read" : presigningRouteFiles.has(route.file) ? "presign" : "upload" });
    if (longRouteFiles.has(route.file)) (fn.node.defaultChild as lambda.CfnFunction).timeout = longApiTimeoutSeconds;
    afterMigrations(fn);
  }
  wire(stage, jobScopes.stage);
  wire(deadLetter, jobScopes.deadLetter);
  wire(sweep.jobFunction, jobScopes.sweep);
  wire(storeJanitor.jobFunction, jobScopes.storeJanitor);
  wire(migrate, jobScopes.migrate);
  wire(rendition, ["rendition-service"]);
  for (const fn of [stage, deadLetter, sweep.jobFunction, storeJanitor.jobFunction]) afterMigrations(fn);

  stack.addOutputs({
    url: api.url,
    renditionUrl: rendition.url!,
    bucket: bucket.bucketName,
    queue: queue.queueUrl,
    deadLetterQueue: deadLetters.queueUrl,
    databaseArn: cluster.clusterArn,
  });
  return { api, routeFunctions, bucket, cluster, queue, deadLetters, rendition, stage, deadLetter, sweep, storeJanitor, migrate, migration };
}
