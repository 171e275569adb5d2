/**
 * Headless Chromium for browser tests and recordings: Debian's `chromium` (found on PATH, or CHROMIUM_PATH) driven by
 * playwright-core, with a fresh profile and no background traffic (without those flags its connections to the
 * outside are refused many at a time on machines with no internet).
 */
import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, ...(process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "chromium"))];
  for (const path of candidates) {
    if (!path) continue;
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  throw new Error("no chromium on PATH: install Debian's chromium package (or set CHROMIUM_PATH)");
}

const quiet = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a profile of its own, removed on close; `args` are added to the quiet defaults. */
export async function launchChromium(args: string[] = []): Promise<Chromium> {
  const profile = await mkdtemp(join(tmpdir(), "svc-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: [...quiet, ...args] });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
