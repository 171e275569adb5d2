/**
 * Vitest's global setup (vitest.config.ts): makes the PGlite templates once per run, before any test file, and
 * provides their files to every file (pglite-templates.ts). Removed when the run ends.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { makePgliteTemplate, type TemplateFile, type TemplateKind } from "./pglite-templates";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), "svc-pglite-templates-"));
  const write = async (kind: TemplateKind): Promise<TemplateFile> => {
    const blob = await makePgliteTemplate(kind);
    const file = path.join(dir, kind);
    await writeFile(file, new Uint8Array(await blob.arrayBuffer()));
    return { path: file, type: blob.type };
  };
  project.provide("pgliteTemplates", { empty: await write("empty"), migrated: await write("migrated") });
  return () => rm(dir, { recursive: true, force: true });
}
