/**
 * Every data route needs the service token: the direct-upload routes too, whatever the blob store,
 * so a request without one is 401 before the route looks at its store or its upload.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

describe.each(edgeMatrix)("the direct-upload routes without a valid service token, over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  it.each([
    ["/api/v1/audio/uploads", { mimeType: "audio/wav", size: 10 }],
    ["/api/v1/audio/uploads/3kabcdefghijk/complete", undefined],
  ] as const)("POST %s is 401 UNAUTHORIZED", async (path, json) => {
    for (const token of [null, "wrong-token-0000000000000000000000000000000"]) {
      const res = await svc.post(path, { token, actor: "a", json });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe("UNAUTHORIZED");
    }
  });
});
