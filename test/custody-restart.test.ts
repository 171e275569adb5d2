/**
 * A Node host's custody proofs outlive its process: they are kept in the database as the Lambdas keep theirs, so a
 * restart while the tenant's did:web document cannot be reached still serves the tenant within the grace.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/config/parse-config";
import { createLogger } from "../core/observability/logger";
import { createNodeDeps } from "../core/runtime/node/node-deps";
import { backends } from "./support/databases";
import { startDidServer } from "./support/did-server";

describe.each(backends)("custody proofs across a restart of the Node host on $name", ({ open }) => {
  it("a host restarted while the tenant's document is unreachable trusts the proof the host before it made", async () => {
    const dids = await startDidServer();
    const blobDir = await mkdtemp(path.join(tmpdir(), "custody-restart-"));
    const sql = await open();
    try {
      dids.publish("alpha", "pds.test");
      const did = dids.didOf("alpha");
      const env = {
        NODE_ENV: "test",
        DATABASE_URL: "pglite://memory",
        SVC_BLOB_DIR: blobDir,
        SVC_PUBLIC_BASE_URL: "http://127.0.0.1:1",
        SVC_PDS_HOST: "pds.test",
        SVC_PLAYBACK_SIGNING_KEY: "test-playback-signing-key-0123456789abcdef",
        SVC_APP_TOKENS: `alpha:tok-alpha-${"0".repeat(40)}`,
        SVC_APP_DIDS: `alpha:${did}`,
      };
      const logger = createLogger("silent");
      const host = () => createNodeDeps(parseConfig(env, logger), logger, { sql });
      await (await host()).custody.prove({ appId: "alpha", did });
      await dids.close();
      // The restarted host has never seen the document; it cannot reach it now.
      await expect((await host()).custody.prove({ appId: "alpha", did })).resolves.toBeUndefined();
    } finally {
      await sql.close();
      await rm(blobDir, { recursive: true, force: true });
    }
  });
});
