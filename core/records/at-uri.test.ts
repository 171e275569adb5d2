import { isAtUriString } from "@atproto/syntax";
import { describe, expect, it } from "vitest";
import { parsePostUri, postUri } from "./at-uri";
import { nextTid } from "./tid";

const did = "did:web:tenant.example.com";

describe("post URIs", () => {
  it("a post URI is at://<did>/dev.svc.audio.post/<rkey> and parses back to the same did and rkey", () => {
    for (const d of [did, "did:plc:ewvi7nxzyoun6zhxrhs64oiz", "did:web:localhost%3A3000"]) {
      const rkey = nextTid();
      const uri = postUri(d, rkey);
      expect(uri).toBe(`at://${d}/dev.svc.audio.post/${rkey}`);
      expect(isAtUriString(uri)).toBe(true);
      expect(parsePostUri(uri)).toEqual({ did: d, rkey });
    }
  });

  it("URIs of other collections, non-TID keys, handles or extra parts do not parse as post URIs", () => {
    const rkey = "3lbqcfqdbxk2a";
    for (const uri of [
      `at://${did}/dev.svc.audio.transcript/${rkey}`,
      `at://${did}/app.bsky.feed.post/${rkey}`,
      `at://${did}/dev.svc.audio.postx/${rkey}`,
      `at://${did}/dev.svc.audio.post/self`,
      `at://${did}/dev.svc.audio.post/`,
      `at://${did}/dev.svc.audio.post`,
      `at://${did}/dev.svc.audio.post/${rkey}/more`,
      `at://${did}/dev.svc.audio.post/${rkey}#frag`,
      `at://${did}/dev.svc.audio.post/${rkey}?q=1`,
      `at://tenant.example.com/dev.svc.audio.post/${rkey}`,
      `at://not-a-did/dev.svc.audio.post/${rkey}`,
      `https://${did}/dev.svc.audio.post/${rkey}`,
      `at://${did}/devXsvcXaudioXpost/${rkey}`,
      "",
    ]) {
      expect(parsePostUri(uri), uri).toBeNull();
    }
  });

  it("postUri refuses a malformed DID or a record key that is not a TID", () => {
    expect(() => postUri("tenant.example.com", nextTid())).toThrow(/DID/);
    expect(() => postUri(did, "self")).toThrow(/TID/);
  });
});
