import path from "node:path";

/** The checkout's root, and its migrations: what the test databases are migrated with. */
export const repoRoot = path.resolve(import.meta.dirname, "../..");
export const migrationsDir = path.join(repoRoot, "migrations");
