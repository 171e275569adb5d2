/**
 * Recently decoded PCM by blob, so the stages of one pass (trim, then waveform and render of its output) decode
 * once. Bounded by bytes; least recently used first out. A warm Lambda keeps it between invocations too.
 */
import type { AnalysisPcm } from "./pcm";

export interface PcmCache {
  get(key: string): AnalysisPcm | undefined;
  set(key: string, pcm: AnalysisPcm): void;
}

export function createPcmCache(maxBytes = 64 * 1024 * 1024): PcmCache {
  const entries = new Map<string, AnalysisPcm>();
  let bytes = 0;
  return {
    get(key) {
      const pcm = entries.get(key);
      if (pcm) {
        entries.delete(key);
        entries.set(key, pcm);
      }
      return pcm;
    },
    set(key, pcm) {
      const size = pcm.samples.byteLength;
      if (size > maxBytes) return;
      const old = entries.get(key);
      if (old) {
        bytes -= old.samples.byteLength;
        entries.delete(key);
      }
      entries.set(key, pcm);
      bytes += size;
      for (const [oldest, evicted] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= evicted.samples.byteLength;
      }
    },
  };
}
