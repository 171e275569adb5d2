import { execFileSync } from "node:child_process";
import { chromium, type Browser } from "playwright-core";

/** Debian's chromium (CI installs it), or CHROMIUM_PATH. */
export const chromiumPath = (): string => process.env.CHROMIUM_PATH || execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();

/**
 * Headless Chromium as this machine needs it (no sandbox as root, nothing reaching out), with a fake microphone that
 * plays `microphoneWav` in a loop. Playwright gives each launch a fresh profile directory.
 */
export const launchChromium = (microphoneWav: string): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath(),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${microphoneWav}`,
    ],
  });
