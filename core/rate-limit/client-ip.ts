import { isIP } from "node:net";

export interface ClientIpOptions {
  /** `edge`: the address the edge saw. `forwarded`: X-Forwarded-For, read through `trustedProxyHops` trusted proxies. */
  source: "forwarded" | "edge";
  trustedProxyHops: number;
}

export interface ClientIpRequest {
  /** Header names lower-cased; a repeated header may arrive comma-joined or as an array. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  sourceIp: string;
}

/** The eight 16-bit groups of an IPv6 address (`isIP` said 6), an embedded IPv4 tail and a zone id allowed. */
const ipv6Groups = (ip: string): number[] => {
  let text = ip.replace(/%.*$/, "");
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const part = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
};

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:0:0/96`) carries, in whichever spelling; else undefined. */
const mappedIpv4 = (ip: string): string | undefined => {
  const [a, b, c, d, e, f, g, h] = ipv6Groups(ip) as [number, number, number, number, number, number, number, number];
  if (a || b || c || d || e || f !== 0xffff) return undefined;
  return [g >> 8, g & 255, h >> 8, h & 255].join(".");
};

/**
 * Strips quotes, IPv6 brackets and ports, and turns IPv4-mapped IPv6 into IPv4 however it is spelt (`::ffff:1.2.3.4`,
 * `0:0:0:0:0:ffff:1.2.3.4`, `::ffff:102:304`): left IPv6, every mapped address would share the one /64 they are in.
 */
export const normaliseIp = (raw: string): string => {
  let s = raw.trim().replace(/^"(.*)"$/, "$1");
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^[^:]+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(":")); // IPv4 or name with a port; bare IPv6 has several colons
  s = s.toLowerCase();
  return (isIP(s) === 6 && mappedIpv4(s)) || s;
};

const forwardedFor = (value: string | readonly string[] | undefined): string[] =>
  (typeof value === "string" ? [value] : (value ?? []))
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");

/**
 * The client address used by the IP rate limits. With `forwarded`, each trusted proxy appends the address it saw,
 * so the client is the entry `trustedProxyHops` places left of the socket address; entries further left are
 * written by the client and never trusted. With 0 hops X-Forwarded-For is ignored.
 */
export const clientIp = (req: ClientIpRequest, opts: ClientIpOptions): string => {
  const source = normaliseIp(req.sourceIp) || "unknown";
  if (opts.source === "edge" || opts.trustedProxyHops <= 0) return source;
  const addresses = [...forwardedFor(req.headers["x-forwarded-for"]), req.sourceIp];
  const picked = normaliseIp(addresses[Math.max(0, addresses.length - 1 - Math.floor(opts.trustedProxyHops))]!);
  // A trusted proxy writes a well-formed address; anything else means a misconfigured hop count, so fall back.
  return isIP(picked) ? picked : source;
};

/**
 * What the IP limiters count per: an IPv4 address as it is, an IPv6 address by its /64 (`2001:db8:7:7::/64`). A
 * /64 is what a network hands one subscriber, and a host there picks any of its 2^64 interface ids (privacy
 * addresses change daily, and a client may take a new one per request), so keyed per address the caller would choose
 * its own key and never meet the limit.
 */
export const rateLimitAddress = (ip: string): string =>
  isIP(ip) === 6 ? `${ipv6Groups(ip).slice(0, 4).map((g) => g.toString(16)).join(":")}::/64` : ip;
