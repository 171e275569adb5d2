import { describe, expect, it } from "vitest";
import { backends, migratedDatabase } from "../../test/support/databases";
import { processingVariables } from "../config/processing-config";
import { postViewSchema } from "../posts/post-view-schema";
import { providerCatalog } from "../providers/provider-catalog";
import { processingRequestSchema } from "./post-schema";
import { byteChangingStages, stageOrder } from "./stages";

describe("one ordered list of stages", () => {
  it("every list of stages derives from it: the request schema, the view, the provider variables, the stub provider", () => {
    expect(Object.keys(processingRequestSchema.shape)).toEqual(stageOrder);
    expect(Object.keys(postViewSchema.shape.processing.unwrap().shape)).toEqual(stageOrder);
    expect(Object.keys(processingVariables.defaults).sort()).toEqual([...stageOrder].sort());
    expect(Object.keys(processingVariables.pins).sort()).toEqual([...stageOrder].sort());
    expect(providerCatalog.find((p) => p.name === "stub")?.stages).toEqual(stageOrder);
  });

  it("the byte-changing stages come first, each working on the one before's output", () => {
    expect(stageOrder.slice(0, byteChangingStages.length)).toEqual(byteChangingStages);
  });

  it.each(backends)("a new stage needs no migration: $name takes any well-formed stage name and refuses a malformed one", async (backend) => {
    const db = await migratedDatabase(backend);
    try {
      const record = JSON.stringify({ $type: "dev.svc.audio.post", text: "x", createdAt: new Date(0).toISOString() });
      await db.query("INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ('a', '3kabcdefghijk', $1::json, 'bafy', 'alice')", [record]);
      const insert = (stage: string) =>
        db.query("INSERT INTO post_stages (app_id, rkey, stage, status, updated_at) VALUES ('a', '3kabcdefghijk', $1, 'pending', now())", [stage]);
      await insert("normalize");
      await expect(insert("Not A Stage")).rejects.toThrow();
    } finally {
      await db.close();
    }
  });
});
