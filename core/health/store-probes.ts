import type { BlobStore } from "../blobs/blob-store";
import type { Sql } from "../sql/port";

/**
 * What /health asks of the stores (docs/decisions.md#health-and-reference): whether each holds anything. Each throws when its store
 * cannot be reached. A port of its own so that the health Lambda can answer with one signed request per store
 * instead of loading the Data API and S3 clients (`core/runtime/lambda/signed-store-probes.ts`).
 */
export interface StoreProbes {
  /** Whether any post is stored. */
  records(): Promise<"empty" | "present">;
  /** Whether any original blob is stored (renditions and staged uploads do not count). */
  blobs(): Promise<"empty" | "present">;
}

/** The records probe's one statement, the same over every runtime. */
export const recordsProbeStatement = "SELECT EXISTS (SELECT 1 FROM posts) AS present";

/** The probes over the SQL and blob ports, where those are built anyway (the Node host). */
export const portStoreProbes = (sql: Sql, blobs: Pick<BlobStore, "probe">): StoreProbes => ({
  records: async () => ((await sql.query<{ present: boolean }>(recordsProbeStatement))[0]?.present ? "present" : "empty"),
  blobs: () => blobs.probe(),
});
