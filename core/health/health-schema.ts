import * as z from "zod";

export const storeStateSchema = z.enum(["empty", "present", "unavailable"]);

export const healthSchema = z.object({
  /** True for any running process; judge readiness by the fields below. */
  ok: z.literal(true),
  sha: z.string().nullable(),
  deployedAt: z.string().nullable(),
  backend: z.enum(["pglite", "postgres", "rds-data"]),
  records: storeStateSchema,
  blobs: storeStateSchema,
});
