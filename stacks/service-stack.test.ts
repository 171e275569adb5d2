import { Match, Template } from "aws-cdk-lib/assertions";
import type { CfnElement, Stack } from "aws-cdk-lib";
import type { Function } from "sst/constructs";
import { App, getStack, use } from "sst/constructs";
import { initProject } from "sst/project.js";
import { beforeAll, describe, expect, it } from "vitest";
import { routeMethods } from "../core/http/route";
import { routeList } from "../functions/routes";
import type { VariableScope } from "../core/config/variable-scopes";
import { configVariables, variablesOf } from "../core/config/variables";
import { parseConfig } from "../core/config/parse-config";
import { selectProvider } from "../core/providers/select-provider";
import { jobScopes, routeScopes } from "../core/runtime/lambda/function-scopes";
import {
  apiTimeoutSeconds,
  processingMaxReceives,
  processingVisibilitySeconds,
  secretNames,
  ServiceStack,
  stageTimeoutSeconds,
  stagingPrefix,
  storeJanitorSchedule,
} from "./service-stack";
import { stageParameters, stageSettings } from "./stage-parameters";

const operatorSettings = {
  SVC_LIMIT_READS_PER_TENANT: "600/1m",
  SVC_APP_TRANSCRIBERS: "alpha:elevenlabs:scribe_v2",
  SVC_WEBHOOK_RETRY_BASE_SECONDS: "45",
  SVC_ORPHAN_MIN_AGE_MS: "7200000",
};

/** The synthesized template of the deploy-mode app, as `sst deploy --stage test` would build it (without bundling). */
let template: Template;
let stack: Stack;
let built: ReturnType<typeof ServiceStack>;
type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
let resources: Record<string, Resource>;

beforeAll(async () => {
  process.env.SVC_PDS_HOST ??= "pds.example.com";
  process.env.SVC_APP_DIDS ??= "alpha:did:web:alpha.example.com";
  process.env.SVC_APP_WEBHOOK_URLS ??= "alpha:https://alpha.example.com/hooks";
  // Settings of the operator, as a deploy takes them from its environment: a rate limit, a tenant's transcriber pin,
  // the webhook retries' first wait and the orphan age.
  for (const [name, value] of Object.entries(operatorSettings)) process.env[name] ??= value;
  await initProject({ stage: "test" });
  const app = new App({ mode: "deploy", stage: "test", name: "audio-post-service", region: "us-east-1", account: "123456789012" });
  const config = (await import("../sst.config")).default;
  config.stacks(app);
  stack = getStack(ServiceStack);
  built = use(ServiceStack);
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
}, 60_000);

const logicalId = (fn: Function) => stack.getLogicalId(fn.node.defaultChild as CfnElement);
const lambdaOf = (fn: Function) => resources[logicalId(fn)]!;
const environmentOf = (fn: Function): Record<string, unknown> => lambdaOf(fn).Properties.Environment?.Variables ?? {};

/** Every IAM action granted to the function's role, with the resources it was granted on. */
const grantsOf = (fn: Function): { actions: string[]; resources: unknown[] }[] => {
  const role = (lambdaOf(fn).Properties.Role as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
  return Object.values(resources)
    .filter((r) => r.Type === "AWS::IAM::Policy" && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === role))
    .flatMap((r) => r.Properties.PolicyDocument.Statement)
    .map((s: { Action: string | string[]; Resource: unknown }) => ({
      actions: [s.Action].flat(),
      resources: [s.Resource].flat(),
    }));
};
const actionsOf = (fn: Function) => grantsOf(fn).flatMap((g) => g.actions);

/** SST's own variables, and AWS's, which are not the service's configuration. */
const platformVariables = new Set(["SST_APP", "SST_STAGE", "SST_SSM_PREFIX", "AWS_NODEJS_CONNECTION_REUSE_ENABLED"]);
/** The service variables a function is given, plain or bound as an SST Config secret or parameter. */
const variablesGiven = (fn: Function): string[] =>
  Object.keys(environmentOf(fn))
    .filter((k) => !platformVariables.has(k))
    .map((k) => k.replace(/^SST_(Secret|Parameter)_value_/, ""))
    .sort();
/** A variable's value as the template spells it, when it is plain text rather than a reference or a secret. */
const plainValue = (fn: Function, variable: string): string | undefined => {
  const value = environmentOf(fn)[variable];
  return typeof value === "string" ? value : undefined;
};
/** Values of the right shape for the variables the template gives as references (resources, SSM secrets). */
const sampleValues: Record<string, string> = {
  DATABASE_URL: "rds-data://svc?resourceArn=arn:aws:rds:us-east-1:123456789012:cluster:c&secretArn=arn:aws:secretsmanager:us-east-1:123456789012:secret:s",
  SVC_BLOB_BUCKET: "audio-post-service-test-blobs",
  PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/123456789012/processing",
  SVC_RENDITION_SERVICE_URL: "https://rendition.lambda-url.us-east-1.on.aws",
  SVC_PUBLIC_BASE_URL: "https://api.example.com",
  SVC_APP_TOKENS: `alpha:${"a".repeat(40)}`,
  SVC_APP_WEBHOOK_SECRETS: `alpha:${"w".repeat(40)}`,
};
/** Every variable the deployment sets on some function. */
const deploymentVariables = () => new Set(functionScopes.flatMap(([, , fn]) => variablesGiven(fn())));

/** Every function of the stack: its name, its scopes, and (once the stack is built) the function. */
const functionScopes: [string, readonly VariableScope[], () => Function][] = [
  ...routeList.flatMap((route) =>
    routeMethods(route).map((method): [string, readonly VariableScope[], () => Function] => {
      const key = `${method} ${route.path}`;
      return [key, routeScopes(route), () => built.routeFunctions.get(key)!];
    }),
  ),
  ["stage", jobScopes.stage, () => built.stage],
  ["dead letter", jobScopes.deadLetter, () => built.deadLetter],
  ["sweep", jobScopes.sweep, () => built.sweep.jobFunction],
  ["store janitor", jobScopes.storeJanitor, () => built.storeJanitor.jobFunction],
  ["migrate", jobScopes.migrate, () => built.migrate],
  ["rendition", ["rendition-service"], () => built.rendition],
];

const serviceFunctions = () => [
  ...built.routeFunctions.values(),
  built.stage,
  built.deadLetter,
  built.sweep.jobFunction,
  built.storeJanitor.jobFunction,
];

describe("each function's variables, from the variable table (core/config/variables.ts) and its scopes", () => {
  it.each(functionScopes)(
    "%s is given only variables of its scopes %j, and every one of them this deployment sets",
    (_, scopes, fn) => {
      const own = variablesOf(scopes).map((row) => row.name);
      const expected = [...deploymentVariables()].filter((variable) => own.includes(variable)).sort();
      expect(variablesGiven(fn())).toEqual(expected);
    },
  );

  // The rendition service parses its own few variables (core/rendition/rendition-config.ts).
  it.each(functionScopes.filter(([name]) => name !== "rendition"))(
    "%s is given every variable its scopes require",
    (_, scopes, fn) => {
      const required = variablesOf(scopes).filter((row) => row.required).map((row) => row.name);
      if (scopes.includes("blobs")) required.push("SVC_BLOB_BUCKET");
      expect(variablesGiven(fn())).toEqual(expect.arrayContaining(required));
    },
  );

  it("sets only variables of the table", () => {
    const rows = new Set(configVariables.map((row) => row.name));
    expect([...deploymentVariables()].filter((name) => !rows.has(name))).toEqual([]);
  });

  it.each(["GET /openapi.json", "GET /api/reference", "GET /api/reference/standalone.js"])(
    "%s is given no database, bucket, tenant or signing variable",
    (key) => {
      expect(variablesGiven(built.routeFunctions.get(key)!)).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^(DATABASE_URL|SVC_BLOB_BUCKET|SVC_APP_TOKENS|SVC_PDS_HOST|SVC_PLAYBACK_SIGNING_KEY)$/)]),
      );
    },
  );

  it("health is given what its probes need (both stores' names), the build identity, and no secret", () => {
    expect(variablesGiven(built.routeFunctions.get("GET /health")!)).toEqual(
      ["CLIENT_IP_SOURCE", "DATABASE_URL", "LOG_LEVEL", "NODE_ENV", "SVC_BLOB_BUCKET", "SVC_DEPLOYED_AT", "SVC_GIT_SHA"],
    );
  });

  it.each(Object.entries(operatorSettings))(
    "an operator's setting given to `sst deploy` (%s) reaches every function of its scopes as it was set, and no other",
    (name, value) => {
      const row = configVariables.find((r) => r.name === name)!;
      expect(row.deploy).toBe(true);
      const reaches = (scopes: readonly VariableScope[]) => row.scopes.some((scope) => scopes.includes(scope));
      for (const [fnName, scopes, fn] of functionScopes) {
        expect(environmentOf(fn())[name], fnName).toBe(reaches(scopes) ? value : undefined);
      }
      expect(functionScopes.filter(([, scopes]) => reaches(scopes)).length).toBeGreaterThan(0);
    },
  );

  it("the rate limits, providers, models, timeouts, lease, webhook retry schedule and orphan age are operator's settings", () => {
    const settings = configVariables.filter((row) => row.deploy).map((row) => row.name);
    expect(settings).toEqual(expect.arrayContaining(configVariables.filter((row) => row.scopes.includes("limits")).map((row) => row.name)));
    expect(settings).toEqual(
      expect.arrayContaining([
        "SVC_TRANSCRIBER", "SVC_DENOISER", "SVC_TRIMMER", "SVC_NORMALIZER", "SVC_WAVEFORM",
        "SVC_APP_TRANSCRIBERS", "SVC_APP_DENOISERS", "SVC_APP_TRIMMERS", "SVC_APP_NORMALIZERS", "SVC_APP_WAVEFORMS",
        "SVC_APP_STT_MODELS", "SVC_PLATFORM_STT_MODEL", "ELEVENLABS_STT_MODEL", "ELEVENLABS_BASE_URL",
        "SVC_DB_CONNECT_TIMEOUT_MS", "SVC_DB_STATEMENT_TIMEOUT_MS", "SVC_REQUEST_DEADLINE_MS", "SVC_LEASE_MS", "SVC_LEASE_HEARTBEAT_MS",
        "SVC_WEBHOOK_RETRY_BASE_SECONDS", "SVC_WEBHOOK_RETRY_CAP_SECONDS", "SVC_WEBHOOK_GIVE_UP_SECONDS", "SVC_WEBHOOK_RETENTION_SECONDS", "SVC_ORPHAN_MIN_AGE_MS",
      ]),
    );
  });

  it("a LOG_LEVEL or SVC_PDS_HOST the service would refuse stops the deploy naming it, rather than every cold start", () => {
    expect(() => stageParameters("prod", { SVC_PDS_HOST: "pds.example.com", LOG_LEVEL: "verbose", SVC_GIT_SHA: "x" })).toThrow(/^LOG_LEVEL .* when deploying stage prod/);
    expect(() => stageParameters("prod", { SVC_PDS_HOST: "https://pds.example.com/", SVC_GIT_SHA: "x" })).toThrow(/^SVC_PDS_HOST .* when deploying stage prod/);
    expect(stageParameters("prod", { SVC_PDS_HOST: " pds.example.com ", LOG_LEVEL: "warn", SVC_GIT_SHA: "x" })).toMatchObject({ pdsHost: "pds.example.com", logLevel: "warn" });
  });

  it("a malformed operator's setting stops the deploy naming it; one left unset is not set on any function", () => {
    expect(() => stageSettings("prod", { SVC_LIMIT_WRITES_PER_IP: "120 per 15m" })).toThrow(/^SVC_LIMIT_WRITES_PER_IP must be <count>\/<window>.* when deploying stage prod/);
    expect(() => stageSettings("prod", { SVC_ORPHAN_MIN_AGE_MS: "an hour" })).toThrow(/^SVC_ORPHAN_MIN_AGE_MS .* when deploying stage prod/);
    expect(stageSettings("prod", { SVC_LIMIT_WRITES_PER_IP: " 240/15m ", SVC_LIMIT_READS_PER_IP: "", SVC_TRIMMER: " stub " })).toEqual({
      SVC_LIMIT_WRITES_PER_IP: "240/15m",
      SVC_TRIMMER: "stub",
    });
    // Unset, the stack sets none of them itself: the function reads the table's default.
    const unset = configVariables.filter((row) => row.deploy && !(row.name in operatorSettings)).map((row) => row.name);
    expect(unset.filter((name) => deploymentVariables().has(name))).toEqual([]);
  });

  it("every function that chooses providers (create and PATCH when they plan, the stage when it runs) is told the blob store is S3, so all of them choose aws-transcribe, the platform transcriber", () => {
    const choosers = functionScopes.filter(([, scopes]) => scopes.includes("providers"));
    expect(choosers.map(([name]) => name)).toEqual(expect.arrayContaining(["POST /api/v1/posts", "PATCH /api/v1/posts/{postId}", "stage"]));
    for (const [name, scopes, fn] of choosers) {
      // The function's own variables: their values where the template spells them, else one of the right shape.
      const env = Object.fromEntries(variablesGiven(fn()).map((variable) => [variable, plainValue(fn(), variable) ?? sampleValues[variable] ?? "s".repeat(40)]));
      const config = parseConfig(env, { error: () => undefined, warn: () => undefined }, scopes);
      // beta: a tenant with no pin of its own (the operator's settings pin alpha's transcriber).
      expect(selectProvider("transcribe", "beta", config, { error: () => undefined }), name).toEqual({ ok: true, provider: "aws-transcribe" });
    }
  });

  it("the stage function is given the tenants' DIDs: a transcript names its subject by the tenant's DID", () => {
    expect(variablesGiven(built.stage)).toContain("SVC_APP_DIDS");
  });
});

describe("HTTP API", () => {
  it("has a route for every entry of the route table, HEAD where the route answers it, and a catch-all", () => {
    const keys = Object.values(resources)
      .filter((r) => r.Type === "AWS::ApiGatewayV2::Route")
      .map((r) => r.Properties.RouteKey)
      .sort();
    const expected = routeList.flatMap((r) => [`${r.method} ${r.path}`, ...("head" in r && r.head ? [`HEAD ${r.path}`] : [])]);
    expect(keys).toEqual([...expected, "$default"].sort());
  });

  it("carries no CORS configuration", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Api", { ProtocolType: "HTTP", CorsConfiguration: Match.absent() });
  });

  it("sends unknown paths to the envelope 404 function", () => {
    const fn = built.api.getFunction("$default")!;
    expect(fn).toBeDefined();
    expect(Object.keys(lambdaOf(fn).Properties.Environment?.Variables ?? {}).filter((k) => !k.startsWith("SST_") && !k.startsWith("AWS_"))).toEqual([]);
    expect(grantsOf(fn).flatMap((g) => g.actions).filter((a) => !a.startsWith("xray:"))).toEqual([]);
  });
});

describe("functions", () => {
  it("run on nodejs22.x, arm64", () => {
    for (const fn of [...serviceFunctions(), built.rendition, built.migrate]) {
      expect(lambdaOf(fn).Properties).toMatchObject({ Runtime: "nodejs22.x", Architectures: ["arm64"] });
    }
  });

  it("run with NODE_ENV=production", () => {
    for (const fn of [...serviceFunctions(), built.rendition, built.migrate]) expect(environmentOf(fn).NODE_ENV).toBe("production");
  });

  it("hold no secret in plain text: each is an SST Config secret fetched from SSM", () => {
    const json = JSON.stringify(template.toJSON());
    for (const fn of [...serviceFunctions(), built.rendition]) {
      const env = environmentOf(fn);
      for (const name of secretNames) {
        expect(env[name]).toBeUndefined();
        if (`SST_Secret_value_${name}` in env) expect(env[`SST_Secret_value_${name}`]).toBe("__FETCH_FROM_SSM__");
      }
    }
    for (const name of secretNames) expect(json).not.toMatch(new RegExp(`"${name}":`));
  });

  /** Each S3 action the function may take, with where: `bucket` (the bucket itself) or the object prefixes. */
  const s3Access = (fn: Function): Record<string, string[]> => {
    const where = (resource: unknown): string => {
      const text = JSON.stringify(resource);
      return /^\{"Fn::GetAtt":\["Blobs[0-9A-F]+","Arn"\]\}$/.test(text) ? "bucket" : (/"\/([^"]*)"\]\]\}$/.exec(text)?.[1] ?? text);
    };
    const access: Record<string, string[]> = {};
    for (const grant of grantsOf(fn)) {
      for (const action of grant.actions.filter((a) => a.startsWith("s3:"))) access[action] = [...(access[action] ?? []), ...grant.resources.map(where)].sort();
    }
    return access;
  };
  const routeFn = (key: string) => built.routeFunctions.get(key)!;
  const writes = { "s3:ListBucket": ["bucket"], "s3:AbortMultipartUpload": ["staging/*"] };

  it("each function reaches only the prefixes and actions it uses: presigning an upload may only put into staging/, playback only reads, and no function is granted the whole bucket but the janitor", () => {
    expect(s3Access(routeFn("POST /api/v1/audio/uploads"))).toEqual({ "s3:PutObject": ["staging/*"] });
    expect(s3Access(routeFn("GET /api/v1/audio"))).toEqual({ "s3:ListBucket": ["bucket"], "s3:GetObject": ["blobs/*", "renditions/*"] });
    for (const key of ["POST /api/v1/audio/upload", "POST /api/v1/audio/uploads/{uploadId}/complete"]) {
      expect(s3Access(routeFn(key)), key).toEqual({
        ...writes,
        "s3:GetObject": ["blobs/*", "staging/*"],
        "s3:PutObject": ["blobs/*", "staging/*"],
        // An upload takes back the copy at its content address that it could not record.
        "s3:DeleteObject": ["blobs/*", "staging/*"],
      });
    }
    for (const fn of [built.stage, routeFn("POST /api/v1/system/process-audio")]) {
      expect(s3Access(fn)).toEqual({ ...writes, "s3:GetObject": ["blobs/*", "staging/*"], "s3:PutObject": ["blobs/*", "staging/*"], "s3:DeleteObject": ["staging/*"] });
    }
    expect(s3Access(built.rendition)).toEqual({
      "s3:ListBucket": ["bucket"],
      "s3:AbortMultipartUpload": ["renditions/*", "staging/*"],
      "s3:GetObject": ["blobs/*", "renditions/*", "staging/*"],
      "s3:PutObject": ["blobs/*", "renditions/*", "staging/*"],
      "s3:DeleteObject": ["staging/*"],
    });
    for (const key of ["POST /api/v1/posts", "PATCH /api/v1/posts/{postId}"]) expect(s3Access(routeFn(key)), key).toEqual({});
  });

  it("grants the Data API calls the adapter makes and SendMessage alone to dispatchers: no BatchExecuteStatement, no queue lookups", () => {
    expect([...built.routeFunctions.values(), built.stage, built.sweep.jobFunction, built.rendition].flatMap(actionsOf)).not.toContain("rds-data:BatchExecuteStatement");
    // The stage function's queue permissions are its event source's, which polls with the function's role.
    expect([...built.routeFunctions.values(), built.sweep.jobFunction].flatMap(actionsOf).filter((a) => /^sqs:GetQueue/.test(a))).toEqual([]);
    expect(actionsOf(routeFn("POST /api/v1/posts")).filter((a) => a.startsWith("rds-data:") || a.startsWith("sqs:")).sort()).toEqual([
      "rds-data:BeginTransaction",
      "rds-data:CommitTransaction",
      "rds-data:ExecuteStatement",
      "rds-data:RollbackTransaction",
      "sqs:SendMessage",
    ]);
  });

  describe.each(routeList.flatMap((r) => [`${r.method} ${r.path}`, ...("head" in r && r.head ? [`HEAD ${r.path}`] : [])]))("%s", (key) => {
    const route = routeList.find((r) => key.endsWith(` ${r.path}`) && (key.startsWith(r.method) || key.startsWith("HEAD")))!;
    const ports = new Set<VariableScope>(routeScopes(route));

    it("gets exactly the permissions its route uses", () => {
      const actions = actionsOf(built.routeFunctions.get(key)!);
      expect(actions.some((a) => a.startsWith("rds-data:"))).toBe(ports.has("sql") || ports.has("probes"));
      expect(actions.some((a) => a.startsWith("s3:"))).toBe(ports.has("blobs") || ports.has("probes"));
      expect(actions.includes("sqs:SendMessage")).toBe(ports.has("dispatch"));
      expect(actions.some((a) => a.startsWith("transcribe:"))).toBe(ports.has("stages"));
      expect(actions.some((a) => a.startsWith("sqs:Receive"))).toBe(false);
    });

    it.runIf(ports.has("probes"))("gets only what its store probes send: ExecuteStatement with the cluster's secret, and a bucket listing", () => {
      // Besides tracing and the SSM read of its bound Config values, which every function gets.
      const grants = grantsOf(built.routeFunctions.get(key)!).filter((g) => !g.actions.every((a) => a.startsWith("xray:") || a.startsWith("ssm:")));
      const actions = grants.flatMap((g) => g.actions).sort();
      expect(actions).toEqual(["rds-data:ExecuteStatement", "s3:ListBucket", "secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"]);
      const resourcesOf = (action: string) => JSON.stringify(grants.filter((g) => g.actions.includes(action)).flatMap((g) => g.resources));
      expect(resourcesOf("rds-data:ExecuteStatement")).toMatch(/"Ref":"Database[0-9A-F]+"/);
      expect(resourcesOf("s3:ListBucket")).toMatch(/"Fn::GetAtt":\["Blobs[0-9A-F]+","Arn"\]/);
      expect(resourcesOf("secretsmanager:GetSecretValue")).toMatch(/"Ref":"DatabaseSecretAttachment[0-9A-F]+"/);
    });

    it(`times out within API Gateway's 30 s`, () => {
      const timeout = lambdaOf(built.routeFunctions.get(key)!).Properties.Timeout;
      expect(timeout).toBeGreaterThanOrEqual(apiTimeoutSeconds);
      expect(timeout).toBeLessThan(30);
    });
  });
});

describe("blob bucket", () => {
  it("is private, encrypted and TLS-only, and expires staged uploads after a day", () => {
    template.hasResourceProperties("AWS::S3::Bucket", {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: {
        Rules: [
          Match.objectLike({ Prefix: stagingPrefix, ExpirationInDays: 1, Status: "Enabled" }),
          // Parts of an upload cut off anywhere in the bucket (a rendition is uploaded straight to its key) go too.
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: "Enabled", Prefix: Match.absent() }),
        ],
      },
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } })]) },
    });
  });

  it("stages uploads under the prefix the lifecycle rule expires", async () => {
    const { readFile } = await import("node:fs/promises");
    expect(await readFile(new URL("../core/audio/presigned-upload.ts", import.meta.url), "utf8")).toContain("`staging/${appId}/${uploadId}`");
  });
});

describe("database", () => {
  it("is Aurora PostgreSQL Serverless v2 with the Data API, encrypted, scaling from 0 ACU", () => {
    template.hasResourceProperties("AWS::RDS::DBCluster", {
      Engine: "aurora-postgresql",
      EnableHttpEndpoint: true,
      StorageEncrypted: true,
      DatabaseName: "svc",
      ServerlessV2ScalingConfiguration: { MinCapacity: 0, MaxCapacity: Match.anyValue() },
    });
    template.hasResourceProperties("AWS::RDS::DBInstance", { DBInstanceClass: "db.serverless", Engine: "aurora-postgresql" });
  });

  it("ends a statement on the server when the Data API client stops waiting for it: statement_timeout is SVC_DB_STATEMENT_TIMEOUT_MS", () => {
    template.hasResourceProperties("AWS::RDS::DBClusterParameterGroup", { Family: "aurora-postgresql16", Parameters: { statement_timeout: "10000" } });
    const [group] = Object.keys(template.findResources("AWS::RDS::DBClusterParameterGroup"));
    template.hasResourceProperties("AWS::RDS::DBCluster", { DBClusterParameterGroupName: { Ref: group } });
  });

  it("keeps its credentials in a generated Secrets Manager secret attached to the cluster", () => {
    template.hasResourceProperties("AWS::SecretsManager::Secret", { GenerateSecretString: Match.objectLike({ GenerateStringKey: "password" }) });
    template.resourceCountIs("AWS::SecretsManager::SecretTargetAttachment", 1);
  });

  it("is reached by functions outside the VPC through DATABASE_URL=rds-data://, by those whose scopes hold sql or probes", () => {
    for (const [, scopes, fn] of functionScopes) {
      expect(lambdaOf(fn()).Properties.VpcConfig).toBeUndefined();
      if (scopes.includes("sql") || scopes.includes("probes")) expect(JSON.stringify(environmentOf(fn()).DATABASE_URL)).toMatch(/rds-data:\/\/svc\?resourceArn=/);
      else expect(environmentOf(fn()).DATABASE_URL).toBeUndefined();
    }
  });
});

describe("processing queue", () => {
  it("redrives to the dead-letter queue after 3 receives", () => {
    const deadLetterId = stack.getLogicalId(built.deadLetters.node.defaultChild as CfnElement);
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: { maxReceiveCount: processingMaxReceives, deadLetterTargetArn: { "Fn::GetAtt": [deadLetterId, "Arn"] } },
    });
    expect(processingMaxReceives).toBe(3);
  });

  it("hides a message for six times the stage function's timeout", () => {
    const queue = resources[stack.getLogicalId(built.queue.cdk.queue.node.defaultChild as CfnElement)]!;
    expect(queue.Properties.VisibilityTimeout).toBe(processingVisibilitySeconds);
    expect(lambdaOf(built.stage).Properties.Timeout).toBe(stageTimeoutSeconds);
    expect(queue.Properties.VisibilityTimeout).toBe(6 * lambdaOf(built.stage).Properties.Timeout);
  });

  it("feeds the stage function and the dead-letter consumer one message at a time", () => {
    const mappings = Object.values(resources).filter((r) => r.Type === "AWS::Lambda::EventSourceMapping");
    const byFunction = (fn: Function) => mappings.find((m) => m.Properties.FunctionName.Ref === logicalId(fn));
    expect(byFunction(built.stage)?.Properties).toMatchObject({ BatchSize: 1 });
    expect(byFunction(built.deadLetter)?.Properties).toMatchObject({ BatchSize: 1 });
    const queueArn = (q: CfnElement) => ({ "Fn::GetAtt": [stack.getLogicalId(q), "Arn"] });
    expect(byFunction(built.stage)?.Properties.EventSourceArn).toEqual(queueArn(built.queue.cdk.queue.node.defaultChild as CfnElement));
    expect(byFunction(built.deadLetter)?.Properties.EventSourceArn).toEqual(queueArn(built.deadLetters.node.defaultChild as CfnElement));
  });

  it("hides a message from every queue for at least as long as the function it feeds may run, as Lambda requires of an event source", () => {
    const mappings = Object.values(resources).filter((r) => r.Type === "AWS::Lambda::EventSourceMapping");
    expect(mappings.length).toBe(2);
    for (const mapping of mappings) {
      const queue = resources[mapping.Properties.EventSourceArn["Fn::GetAtt"][0]]!;
      const fn = resources[mapping.Properties.FunctionName.Ref]!;
      expect(queue.Properties.VisibilityTimeout ?? 30).toBeGreaterThanOrEqual(fn.Properties.Timeout);
    }
  });

  it("lets the stage function receive, and the create and PATCH routes only send", () => {
    expect(actionsOf(built.stage)).toEqual(expect.arrayContaining(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"]));
    expect(actionsOf(built.deadLetter)).toEqual(expect.arrayContaining(["sqs:ReceiveMessage", "sqs:DeleteMessage"]));
  });
});

describe("workers", () => {
  const workers = ["stage", "deadLetter", "sweep"] as const;
  it.each(workers)("%s gets the permissions of its scopes and no others", (name) => {
    const fn = { stage: built.stage, deadLetter: built.deadLetter, sweep: built.sweep.jobFunction }[name];
    const ports = new Set<VariableScope>(jobScopes[name]);
    const actions = actionsOf(fn);
    expect(actions.some((a) => a.startsWith("rds-data:"))).toBe(ports.has("sql"));
    expect(actions.some((a) => a.startsWith("s3:"))).toBe(ports.has("blobs"));
    expect(actions.includes("sqs:SendMessage")).toBe(ports.has("dispatch"));
    expect(actions.some((a) => a.startsWith("transcribe:"))).toBe(ports.has("stages"));
    expect("SST_Secret_value_SVC_APP_WEBHOOK_SECRETS" in environmentOf(fn)).toBe(ports.has("webhooks"));
  });

  it.each(workers)("%s has ffmpeg exactly when it runs stages (a provider's output is re-encoded in the pass)", (name) => {
    const fn = { stage: built.stage, deadLetter: built.deadLetter, sweep: built.sweep.jobFunction }[name];
    const runsStages = (jobScopes[name] as readonly VariableScope[]).includes("stages");
    expect(environmentOf(fn).FFMPEG_PATH).toBe(runsStages ? "/opt/bin/ffmpeg" : undefined);
    expect(lambdaOf(fn).Properties.Layers?.length ?? 0).toBe(runsStages ? 1 : 0);
  });

  it("run the stage pass with the bucket, database and providers, and send nothing to the queue", () => {
    const env = environmentOf(built.stage);
    expect(Object.keys(env)).toEqual(expect.arrayContaining(["DATABASE_URL", "SVC_BLOB_BUCKET", "SVC_RENDITION_SERVICE_URL"]));
    expect(env).not.toHaveProperty("PROCESSING_QUEUE_URL");
    expect(actionsOf(built.stage)).not.toContain("sqs:SendMessage");
    expect(env.SVC_PLATFORM_TRANSCRIBER).toBe("aws-transcribe");
    expect(actionsOf(built.stage)).toEqual(expect.arrayContaining(["transcribe:StartTranscriptionJob", "transcribe:GetTranscriptionJob"]));
  });

  it("sweeps every 5 minutes, as the contract says: a dead holder's stages are dispatched again within about six", () => {
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(5 minutes)",
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [logicalId(built.sweep.jobFunction), "Arn"] } })],
    });
  });
});

describe("store janitor", () => {
  const janitor = () => built.storeJanitor.jobFunction;

  it("sweeps the bucket for debris hourly, as orphans must be an hour old before they go", () => {
    expect(storeJanitorSchedule).toBe("rate(1 hour)");
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 hour)",
      Targets: [Match.objectLike({ Arn: { "Fn::GetAtt": [logicalId(janitor()), "Arn"] } })],
    });
  });

  it("may only list, read the age of and delete the bucket's objects, and use the Data API: it writes no object and sends nothing", () => {
    const s3 = grantsOf(janitor()).filter((grant) => grant.actions.some((action) => action.startsWith("s3:")));
    expect(s3.flatMap((grant) => grant.actions).sort()).toEqual(["s3:DeleteObject", "s3:GetObject", "s3:ListBucket"]);
    const bucketArn = { "Fn::GetAtt": [stack.getLogicalId(built.bucket.node.defaultChild as CfnElement), "Arn"] };
    expect(s3.find((grant) => grant.actions.includes("s3:ListBucket"))!.resources).toEqual([bucketArn]);
    expect(s3.find((grant) => grant.actions.includes("s3:DeleteObject"))!.resources).toEqual([{ "Fn::Join": ["", [bucketArn, "/*"]] }]);
    const actions = actionsOf(janitor());
    expect(actions).toEqual(expect.arrayContaining(["rds-data:ExecuteStatement", "rds-data:BeginTransaction"]));
    expect(actions.filter((action) => /^(sqs|transcribe):/.test(action))).toEqual([]);
    // The orphan age is there because this test's deploy sets it (operatorSettings).
    expect(variablesGiven(janitor())).toEqual(["DATABASE_URL", "LOG_LEVEL", "NODE_ENV", "SVC_BLOB_BUCKET", "SVC_ORPHAN_MIN_AGE_MS"]);
  });
});

describe("rendition service", () => {
  it("is a Lambda behind a function URL (no CORS) with arm64 ffmpeg in a layer", () => {
    template.hasResourceProperties("AWS::Lambda::Url", {
      AuthType: "NONE",
      Cors: Match.absent(),
      TargetFunctionArn: { "Fn::GetAtt": [logicalId(built.rendition), "Arn"] },
    });
    template.hasResourceProperties("AWS::Lambda::LayerVersion", { CompatibleArchitectures: ["arm64"] });
    expect(lambdaOf(built.rendition).Properties.Layers).toHaveLength(1);
    expect(environmentOf(built.rendition).FFMPEG_PATH).toBe("/opt/bin/ffmpeg");
    expect(environmentOf(built.rendition).SST_Secret_value_SYSTEM_AUTH_TOKEN).toBe("__FETCH_FROM_SSM__");
  });

  it("is wired into the functions that use providers: its URL and the token they send", () => {
    const url = { "Fn::GetAtt": [stack.getLogicalId(built.rendition.node.findChild("FunctionUrl").node.defaultChild as CfnElement), "FunctionUrl"] };
    for (const fn of [built.stage, built.routeFunctions.get("GET /api/v1/audio")!]) {
      expect(environmentOf(fn).SVC_RENDITION_SERVICE_URL).toEqual(url);
      expect(environmentOf(fn).SST_Secret_value_SYSTEM_AUTH_TOKEN).toBe("__FETCH_FROM_SSM__");
    }
  });
});

describe("migrations", () => {
  it("run at every deploy through an SST Script over the Data API", () => {
    template.hasResourceProperties("Custom::SSTScript", {
      UserCreateFunction: { Ref: logicalId(built.migrate) },
      UserUpdateFunction: { Ref: logicalId(built.migrate) },
      Version: Match.anyValue(),
    });
    expect(actionsOf(built.migrate)).toEqual(expect.arrayContaining(["rds-data:ExecuteStatement", "rds-data:BeginTransaction"]));
  });

  it("finish before any function that serves is updated", () => {
    const [scriptId] = Object.entries(resources).find(([, r]) => r.Type === "Custom::SSTScript")!;
    for (const fn of serviceFunctions()) expect(lambdaOf(fn).DependsOn ?? []).toContain(scriptId);
  });
});
