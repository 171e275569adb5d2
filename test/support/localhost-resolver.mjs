// Names under .localhost are loopback (RFC 6761), as emulators hand them out (fauxqs: sqs.<region>.localhost); this
// machine's resolver does not know them. Imported by the Lambda container runner, and preloaded (--import) into the
// time-to-ready benchmark's Node host. Plain JavaScript so any Node binary runs it.
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
