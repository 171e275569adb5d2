/**
 * The independent meter the normalize tests judge by: ffmpeg's ebur128 filter with true peak on (ITU-R BS.1770 /
 * EBU R128), run on the stored bytes as a player would get them, read here without the service's own code.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ffmpeg } from "./rendition-fixtures";

const run = promisify(execFile);

export interface Metered {
  /** LUFS; -70 is ebur128's floor (nothing gated). */
  integratedLufs: number;
  /** dBTP; -Infinity for digital silence. */
  truePeakDbtp: number;
  channels: number;
}

const channelCounts: Record<string, number> = { mono: 1, stereo: 2, "5.1": 6, "5.1(side)": 6 };

export async function meterLoudness(bytes: Buffer): Promise<Metered> {
  const dir = await mkdtemp(join(tmpdir(), "loudness-meter-"));
  try {
    const input = join(dir, "input");
    await writeFile(input, bytes);
    const { stderr } = await run(ffmpeg, ["-hide_banner", "-nostats", "-nostdin", "-i", input, "-map", "0:a:0", "-af", "ebur128=peak=true:framelog=verbose", "-f", "null", "-"], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const summary = stderr.slice(stderr.lastIndexOf("Summary:"));
    const integrated = /I:\s+(-?[\d.]+) LUFS/.exec(summary);
    const peak = /Peak:\s+(-inf|-?[\d.]+) dBFS/.exec(summary);
    const layout = /Audio: [^,]+, \d+ Hz, ([^,]+),/.exec(stderr);
    if (!integrated || !peak || !layout) throw new Error(`the meter printed no summary:\n${stderr.slice(-1500)}`);
    return {
      integratedLufs: Number(integrated[1]),
      truePeakDbtp: peak[1] === "-inf" ? -Infinity : Number(peak[1]),
      channels: channelCounts[layout[1]!] ?? Number.NaN,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
