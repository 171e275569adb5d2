import { describe, expect, it } from "vitest";
import { signRequest } from "./aws-sigv4";

/**
 * AWS's published examples: the Signature Version 4 test suite (get-vanilla, get-vanilla-query-order-key-case,
 * post-x-www-form-urlencoded; AKIDEXAMPLE, 20150830T123600Z) and the S3 documentation's "Signature Calculations for
 * the Authorization Header" (GET Object, GET Bucket; AKIAIOSFODNN7EXAMPLE, 20130524T000000Z).
 */
const suite = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const suiteAt = new Date("2015-08-30T12:36:00Z");
const service = { service: "service", region: "us-east-1" };
const s3Docs = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" };
const s3At = new Date("2013-05-24T00:00:00Z");
const s3 = { service: "s3", region: "us-east-1" };
const emptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const signatureOf = (headers: Record<string, string>) => headers.authorization!.split("Signature=")[1];

describe("Signature Version 4", () => {
  it("signs get-vanilla as AWS's test suite does", () => {
    const headers = signRequest({ method: "GET", url: new URL("https://example.amazonaws.com/"), headers: {} }, service, suite, suiteAt);
    expect(headers.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    );
    expect(headers["x-amz-date"]).toBe("20150830T123600Z");
    expect(headers.host).toBeUndefined(); // fetch sends it from the URL
  });

  it("sorts the query string by name (get-vanilla-query-order-key-case)", () => {
    const url = new URL("https://example.amazonaws.com/?Param2=value2&Param1=value1");
    expect(signatureOf(signRequest({ method: "GET", url, headers: {} }, service, suite, suiteAt))).toBe(
      "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
    );
  });

  it("signs the body's hash and the content type (post-x-www-form-urlencoded)", () => {
    const request = { method: "POST", url: new URL("https://example.amazonaws.com/"), headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "Param1=value1" };
    const headers = signRequest(request, service, suite, suiteAt);
    expect(headers.authorization).toContain("SignedHeaders=content-type;host;x-amz-date,");
    expect(signatureOf(headers)).toBe("ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a");
  });

  it("signs S3 requests with their payload hash header (the S3 documentation's GET Object and GET Bucket)", () => {
    const object = { method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"), headers: { range: "bytes=0-9", "x-amz-content-sha256": emptySha256 } };
    expect(signatureOf(signRequest(object, s3, s3Docs, s3At))).toBe("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    const list = { method: "GET", url: new URL("https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J"), headers: { "x-amz-content-sha256": emptySha256 } };
    expect(signatureOf(signRequest(list, s3, s3Docs, s3At))).toBe("34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  });

  it("sends and signs a session token (Lambda's role credentials are temporary)", () => {
    const request = { method: "GET", url: new URL("https://example.amazonaws.com/"), headers: {} };
    const withToken = signRequest(request, service, { ...suite, sessionToken: "token-a" }, suiteAt);
    expect(withToken["x-amz-security-token"]).toBe("token-a");
    expect(withToken.authorization).toContain("SignedHeaders=host;x-amz-date;x-amz-security-token,");
    expect(signatureOf(signRequest(request, service, { ...suite, sessionToken: "token-b" }, suiteAt))).not.toBe(signatureOf(withToken));
  });

  it("signs the host with its port, as fetch sends it", () => {
    const on = (url: string) => signatureOf(signRequest({ method: "GET", url: new URL(url), headers: {} }, service, suite, suiteAt));
    expect(on("http://127.0.0.1:4510/")).not.toBe(on("http://127.0.0.1:4511/"));
  });
});
