// Preloaded into the benchmarked Node host (--import): names under .localhost are loopback (RFC 6761), as fauxqs
// hands out its queue URLs (sqs.<region>.localhost); this machine's resolver does not know them. The same patch as
// the Lambda container runner's (test/support/lambda-container-runner.mjs).
import dns from "node:dns";

const systemLookup = dns.lookup;
dns.lookup = (hostname, options, callback) => {
  if (typeof hostname === "string" && hostname.endsWith(".localhost")) {
    const done = typeof options === "function" ? options : callback;
    const all = typeof options === "object" && options?.all;
    return process.nextTick(() => (all ? done(null, [{ address: "127.0.0.1", family: 4 }]) : done(null, "127.0.0.1", 4)));
  }
  return systemLookup(hostname, options, callback);
};
