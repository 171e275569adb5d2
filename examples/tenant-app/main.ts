/**
 * `npm run example`: the service with its rendition service (as `npm run dev` starts them), and beside them the
 * reference tenant app on EXAMPLE_PORT (default 3002), with the demo tenant's webhooks pointed at the app. The
 * webhook secret is a development default, like the token in local.env. A variable set in the environment wins.
 */
import path from "node:path";
import { startTenantApp } from "./tenant-app";

const appPort = Number(process.env.EXAMPLE_PORT?.trim() || "3002");
const exampleDefaults: Record<string, string> = {
  SVC_APP_WEBHOOK_URLS: `demo:http://127.0.0.1:${appPort}/webhooks`,
  SVC_APP_WEBHOOK_SECRETS: "demo:dev-demo-webhook-secret-not-a-secret-000000",
};
for (const [name, value] of Object.entries(exampleDefaults)) if (process.env[name] === undefined) process.env[name] = value;

// The rendition service and the service, exactly as `npm run dev` runs them (it loads local.env).
await import("../../core/runtime/node/dev-server");

const entryOf = (list: string | undefined, appId: string) => list?.split(",").find((entry) => entry.startsWith(`${appId}:`))?.slice(appId.length + 1);
const token = entryOf(process.env.SVC_APP_TOKENS, "demo");
const webhookSecret = entryOf(process.env.SVC_APP_WEBHOOK_SECRETS, "demo");
if (!token || !webhookSecret) throw new Error("the demo tenant needs a token (SVC_APP_TOKENS) and a webhook secret (SVC_APP_WEBHOOK_SECRETS)");

const app = await startTenantApp({
  service: { baseUrl: `http://127.0.0.1:${process.env.PORT ?? "3000"}`, token },
  webhookSecret,
  listen: { port: appPort },
  stateFile: path.resolve(import.meta.dirname, "../../.data/tenant-app.json"),
});
process.stdout.write(`tenant app: open ${app.url} in a browser\n`);
