// One Lambda execution environment: imports a function bundle once (the cold start), then runs each invocation the
// parent sends over IPC, one at a time, with a context whose remaining time counts down from the function's timeout.
// Plain JavaScript so any Node binary runs it (the tests run it on the Lambda runtime's Node 22).
import { pathToFileURL } from "node:url";
import "./localhost-resolver.mjs";

const [bundle, exportName] = process.argv.slice(2);
let handler;
const started = performance.now();
try {
  handler = (await import(pathToFileURL(bundle).href))[exportName];
  if (typeof handler !== "function") throw new Error(`${bundle} exports no function ${exportName}`);
  process.send({ ready: true, node: process.version, initMs: performance.now() - started });
} catch (error) {
  process.send({ ready: false, node: process.version, error: { name: error?.name, message: error?.message, stack: error?.stack } });
}

process.on("message", async ({ id, event, timeoutMs }) => {
  const deadline = Date.now() + timeoutMs;
  const context = {
    awsRequestId: id,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    process.send({ id, result: (await handler(event, context)) ?? null });
  } catch (error) {
    process.send({ id, error: { name: error?.name, message: error?.message, stack: error?.stack } });
  }
});
