import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSsmStandIn, type SsmStandIn } from "../../../test/support/ssm-stand-in";
import { awsEnvironment } from "../../config/aws-environment";
import { loadSstConfig } from "./sst-config";
import { signRequest } from "../../aws/aws-sigv4";
import { ssmParameters, type SsmParameters } from "../../aws/ssm-parameters";

let ssm: SsmStandIn;
let client: SsmParameters;
beforeAll(async () => {
  ssm = await startSsmStandIn({
    "/sst/svc/prod/Secret/SVC_PLAYBACK_SIGNING_KEY/value": "stage-signing-key-0123456789abcdef0123",
    "/sst/svc/.fallback/Secret/SYSTEM_AUTH_TOKEN/value": "fallback-system-token-0123456789abcdef",
    "/sst/svc/.fallback/Secret/SVC_PLAYBACK_SIGNING_KEY/value": "fallback-signing-key-must-not-win-000000",
  });
  client = ssmParameters(awsEnvironment({ AWS_ENDPOINT_URL_SSM: ssm.endpoint, AWS_REGION: "us-east-1", AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y" }));
});
afterAll(async () => {
  await ssm.stop();
});

const bound = (extra: Record<string, string>): NodeJS.ProcessEnv => ({ AWS_ENDPOINT_URL_SSM: "http://127.0.0.1:9", SST_APP: "svc", SST_STAGE: "prod", SST_SSM_PREFIX: "/sst/svc/prod/", ...extra });

describe("SST Config values at cold start", () => {
  it("fetches each bound secret from SSM into the variable the configuration reads, the stage's value first", async () => {
    const env = bound({ SST_Secret_value_SVC_PLAYBACK_SIGNING_KEY: "__FETCH_FROM_SSM__" });
    await loadSstConfig(env, client);
    expect(env.SVC_PLAYBACK_SIGNING_KEY).toBe("stage-signing-key-0123456789abcdef0123");
  });

  it("falls back to the app-wide value set with `sst secrets set --fallback`", async () => {
    const env = bound({ SST_Secret_value_SYSTEM_AUTH_TOKEN: "__FETCH_FROM_SSM__" });
    await loadSstConfig(env, client);
    expect(env.SYSTEM_AUTH_TOKEN).toBe("fallback-system-token-0123456789abcdef");
  });

  it("leaves a secret set nowhere unset, for the configuration check to name", async () => {
    const env = bound({ SST_Secret_value_ELEVENLABS_API_KEY: "__FETCH_FROM_SSM__" });
    await loadSstConfig(env, client);
    expect(env.ELEVENLABS_API_KEY).toBeUndefined();
  });

  it("copies parameters without calling SSM, and never overrides a variable already set", async () => {
    const before = ssm.calls.length;
    const env = bound({ SST_Parameter_value_SVC_PDS_HOST: "pds.example.com", SST_Secret_value_SYSTEM_AUTH_TOKEN: "__FETCH_FROM_SSM__", SYSTEM_AUTH_TOKEN: "set-directly" });
    await loadSstConfig(env, client);
    expect(env.SVC_PDS_HOST).toBe("pds.example.com");
    expect(env.SYSTEM_AUTH_TOKEN).toBe("set-directly");
    expect(ssm.calls.length).toBe(before);
  });

  it("asks for at most 10 names per GetParameters call", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `SECRET_${i}`);
    const env = bound(Object.fromEntries(names.map((n) => [`SST_Secret_value_${n}`, "__FETCH_FROM_SSM__"])));
    const before = ssm.calls.length;
    await loadSstConfig(env, client);
    expect(ssm.calls.slice(before).every((c) => c.length <= 10)).toBe(true);
  });
});

describe("SSM GetParameters request", () => {
  it("is a JSON 1.1 POST to the SSM endpoint, signed for ssm in the function's region with its session token", async () => {
    const env = { AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", AWS_SESSION_TOKEN: "session-token" };
    const at = new Date("2026-11-22T03:30:00.000Z");
    const sent: { url: string; init: RequestInit }[] = [];
    const fetchImpl = (async (url: URL, init: RequestInit) => {
      sent.push({ url: String(url), init });
      return new Response(JSON.stringify({ Parameters: [], InvalidParameters: ["/x"] }), { status: 200 });
    }) as unknown as typeof fetch;
    await ssmParameters(awsEnvironment(env), fetchImpl, () => at).get(["/x"]);
    const [{ url, init }] = sent as [(typeof sent)[0]];
    expect(url).toBe("https://ssm.eu-west-1.amazonaws.com/");
    expect(init).toMatchObject({ method: "POST", redirect: "manual" });
    const body = JSON.stringify({ Names: ["/x"], WithDecryption: true });
    expect(init.body).toBe(body);
    const headers = { "content-type": "application/x-amz-json-1.1", "x-amz-target": "AmazonSSM.GetParameters" };
    const credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, sessionToken: env.AWS_SESSION_TOKEN };
    expect(init.headers).toEqual(signRequest({ method: "POST", url: new URL(url), headers, body }, { service: "ssm", region: "eu-west-1" }, credentials, at));
  });
});
