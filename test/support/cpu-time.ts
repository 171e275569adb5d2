/**
 * CPU time of this process and of the child processes it has waited for (ffmpeg runs), in ms, from Linux's
 * /proc/self/stat: the cost of work done outside Node, which process.cpuUsage() does not count.
 */
import { readFileSync } from "node:fs";

// USER_HZ is 100 on every Linux the project runs on.
const ticksPerSecond = 100;

export function cpuTimeMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the parenthesised command name; utime, stime, cutime, cstime are fields 14 to 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
  return (ticks * 1000) / ticksPerSecond;
}
