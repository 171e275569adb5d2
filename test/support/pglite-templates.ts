/**
 * PGlite data directories the test databases start from: `empty` (what initdb leaves) and `migrated` (the project's
 * migrations applied). initdb takes seconds, and vitest gives each test file its own module context, so a template
 * kept in memory was made again by every file that opened a database. The run's global setup
 * (pglite-templates-setup.ts) makes each once and writes it to a file; a file reads it from there.
 */
import { readFile } from "node:fs/promises";
import { inject } from "vitest";
import { migrate } from "../../core/sql/migrate";
import { openPglite } from "../../core/sql/pglite";
import { migrationsDir } from "./repo-paths";

export type TemplateKind = "empty" | "migrated";

/** Where the global setup wrote a template, and its tarball's media type (gzip or not), which the load needs. */
export interface TemplateFile {
  path: string;
  type: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    pgliteTemplates: Record<TemplateKind, TemplateFile>;
  }
}

export const makePgliteTemplate = async (kind: TemplateKind): Promise<Blob> => {
  const db = await openPglite("memory");
  try {
    if (kind === "migrated") await migrate(db, migrationsDir);
    return await db.dumpDataDir();
  } finally {
    await db.close();
  }
};

const loaded: Partial<Record<TemplateKind, Promise<Blob>>> = {};

/** The template as a tarball to open a database from: the run's file, or made here when the run provided none. */
export const pgliteTemplate = (kind: TemplateKind): Promise<Blob> =>
  (loaded[kind] ??= load(kind).catch((error: unknown) => {
    delete loaded[kind];
    throw error;
  }));

const load = async (kind: TemplateKind): Promise<Blob> => {
  const file = inject("pgliteTemplates")?.[kind];
  if (!file) return makePgliteTemplate(kind);
  return new Blob([await readFile(file.path)], { type: file.type });
};
