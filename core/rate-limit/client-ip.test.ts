import { describe, expect, it } from "vitest";
import { clientIp, normaliseIp, rateLimitAddress } from "./client-ip";

const req = (xff: string | string[] | undefined, sourceIp = "10.0.0.1") => ({
  headers: xff === undefined ? {} : { "x-forwarded-for": xff },
  sourceIp,
});
const forwarded = (hops: number) => ({ source: "forwarded" as const, trustedProxyHops: hops });

describe("client IP", () => {
  it("edge: the address the edge saw, whatever X-Forwarded-For says", () => {
    expect(clientIp(req("6.6.6.6", "203.0.113.9"), { source: "edge", trustedProxyHops: 2 })).toBe("203.0.113.9");
  });

  it("forwarded with 0 trusted hops ignores X-Forwarded-For, which the client can forge", () => {
    expect(clientIp(req("6.6.6.6", "203.0.113.9"), forwarded(0))).toBe("203.0.113.9");
  });

  it("forwarded with 1 trusted hop takes the address the proxy appended, not ones the client sent", () => {
    // The client forged "6.6.6.6"; the trusted proxy appended the real peer 198.51.100.7.
    expect(clientIp(req("6.6.6.6, 198.51.100.7", "10.0.0.1"), forwarded(1))).toBe("198.51.100.7");
  });

  it("forwarded with 2 trusted hops skips the inner proxy's entry", () => {
    expect(clientIp(req("6.6.6.6, 198.51.100.7, 10.0.0.2", "10.0.0.1"), forwarded(2))).toBe("198.51.100.7");
  });

  it("prepending forged entries does not move the derived address", () => {
    const honest = clientIp(req("198.51.100.7"), forwarded(1));
    const forged = clientIp(req("1.1.1.1, 2.2.2.2, 3.3.3.3, 198.51.100.7"), forwarded(1));
    expect(forged).toBe(honest);
  });

  it("repeated X-Forwarded-For headers are read as one list in order", () => {
    expect(clientIp(req(["6.6.6.6", "198.51.100.7, 10.0.0.2"]), forwarded(2))).toBe("198.51.100.7");
  });

  it("more hops than entries clamps to the first entry", () => {
    expect(clientIp(req("198.51.100.7"), forwarded(5))).toBe("198.51.100.7");
    expect(clientIp(req(undefined, "203.0.113.9"), forwarded(3))).toBe("203.0.113.9");
  });

  it("a malformed entry at the trusted position falls back to the source address", () => {
    expect(clientIp(req("unknown"), forwarded(1))).toBe("10.0.0.1");
  });

  it("ports and IPv6 brackets are stripped and IPv4-mapped IPv6 becomes IPv4", () => {
    expect(normaliseIp("198.51.100.7:4711")).toBe("198.51.100.7");
    expect(normaliseIp("[2001:DB8::1]:443")).toBe("2001:db8::1");
    expect(normaliseIp("[2001:db8::1]")).toBe("2001:db8::1");
    expect(normaliseIp("2001:db8::1")).toBe("2001:db8::1");
    expect(normaliseIp("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(clientIp(req(undefined, "::ffff:203.0.113.9"), forwarded(0))).toBe("203.0.113.9");
    expect(clientIp(req("[2001:db8::7]:5000"), forwarded(1))).toBe("2001:db8::7");
  });

  it("an IPv4-mapped IPv6 address becomes its IPv4 address in any spelling, never the /64 every mapped address shares", () => {
    for (const spelling of ["::ffff:198.51.100.7", "::FFFF:198.51.100.7", "0:0:0:0:0:ffff:198.51.100.7", "::ffff:c633:6407", "0:0::ffff:C633:6407", "[::ffff:c633:6407]:443"]) {
      expect(normaliseIp(spelling)).toBe("198.51.100.7");
      expect(rateLimitAddress(normaliseIp(spelling))).toBe("198.51.100.7");
    }
    expect(clientIp(req("0:0:0:0:0:ffff:203.0.113.9"), forwarded(1))).toBe("203.0.113.9");
    expect(clientIp(req(undefined, "::ffff:cb00:7109"), forwarded(0))).toBe("203.0.113.9");
    // Not mapped: an ordinary IPv6 address with ffff in it stays IPv6.
    expect(normaliseIp("1::ffff:c633:6407")).toBe("1::ffff:c633:6407");
    expect(normaliseIp("::fffe:c633:6407")).toBe("::fffe:c633:6407");
  });

  it("the IP limiters key an IPv6 address on its /64, whatever its spelling, and an IPv4 address on itself", () => {
    expect(rateLimitAddress("198.51.100.7")).toBe("198.51.100.7");
    expect(rateLimitAddress("2001:db8:7:7:1234:5678:9abc:def0")).toBe("2001:db8:7:7::/64");
    expect(rateLimitAddress("2001:0db8:0007:0007::1")).toBe("2001:db8:7:7::/64");
    expect(rateLimitAddress("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(rateLimitAddress("::1")).toBe("0:0:0:0::/64");
    expect(rateLimitAddress("64:ff9b::198.51.100.7")).toBe("64:ff9b:0:0::/64");
    expect(rateLimitAddress("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(rateLimitAddress("unknown")).toBe("unknown");
  });
});
