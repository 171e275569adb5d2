/**
 * MP4 / M4A: skips `mdat` by its stated size and keeps only the small boxes that describe samples (`moov`, and
 * `moof` for fragmented files such as Safari's recordings). The duration is the sum of the durations of the
 * audio samples whose bytes lie inside the file, per the sample tables, never the header's stated duration: a
 * truncated file counts the samples it still holds, and no sample counts for more than half a second.
 */
import { type AudioMeter, type Measured, noAudio } from "./audio-meter";
import { ByteWalker, read, type Step, skip } from "./byte-walker";

/** Boxes kept whole; anything larger is not a plausible sample description. */
const maxKeptBox = 16 * 1024 * 1024;
/** The longest one audio sample (an AAC or Opus frame, a packet of PCM) may be taken to play. */
const maxSampleSeconds = 0.5;

interface Box {
  type: string;
  /** Offsets of the payload within the buffer (after the header, and the full-box version and flags when asked). */
  start: number;
  end: number;
}

function* boxes(buf: Buffer, start: number, end: number): Generator<Box> {
  let at = start;
  while (at + 8 <= end) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString("latin1", at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) return;
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) return;
    yield { type, start: at + header, end: at + size };
    at += size;
  }
}

const child = (buf: Buffer, parent: Box, type: string) => {
  for (const box of boxes(buf, parent.start, parent.end)) if (box.type === type) return box;
  return undefined;
};

/** Reads at `at` only when the box holds those bytes: a lying count never reads outside its box. */
const u32 = (buf: Buffer, box: Box, at: number) => (at + 4 <= box.end ? buf.readUInt32BE(at) : undefined);

interface Track {
  id: number;
  handler: string;
  timescale: number;
  defaults: { duration: number; size: number };
  /** Seconds of samples held in the file, from the sample tables. */
  seconds: number;
}

function tableSeconds(buf: Buffer, stbl: Box, timescale: number, totalBytes: number): number {
  const stts = child(buf, stbl, "stts");
  const stsz = child(buf, stbl, "stsz");
  const stsc = child(buf, stbl, "stsc");
  const stco = child(buf, stbl, "stco") ?? child(buf, stbl, "co64");
  if (!stts || !stsz || !stsc || !stco) return 0;
  const wide = stco.type === "co64";
  const chunkCount = Math.min(u32(buf, stco, stco.start + 4) ?? 0, Math.floor((stco.end - stco.start - 8) / (wide ? 8 : 4)));
  const constantSize = u32(buf, stsz, stsz.start + 4) ?? 0;
  const sizeCount = u32(buf, stsz, stsz.start + 8) ?? 0;
  const listed = constantSize === 0 ? Math.min(sizeCount, Math.floor((stsz.end - stsz.start - 12) / 4)) : sizeCount;
  const runs = Math.min(u32(buf, stsc, stsc.start + 4) ?? 0, Math.floor((stsc.end - stsc.start - 8) / 12));
  const deltas = Math.min(u32(buf, stts, stts.start + 4) ?? 0, Math.floor((stts.end - stts.start - 8) / 8));
  const cap = timescale * maxSampleSeconds;

  let ticks = 0;
  let sample = 0;
  let deltaRun = 0;
  let deltaLeft = deltas > 0 ? buf.readUInt32BE(stts.start + 8) : 0;
  let delta = deltas > 0 ? buf.readUInt32BE(stts.start + 12) : 0;
  for (let run = 0; run < runs; run++) {
    const entry = stsc.start + 8 + run * 12;
    const firstChunk = buf.readUInt32BE(entry) - 1;
    const perChunk = buf.readUInt32BE(entry + 4);
    const nextFirst = run + 1 < runs ? buf.readUInt32BE(entry + 12) - 1 : chunkCount;
    for (let chunk = firstChunk; chunk < Math.min(nextFirst, chunkCount); chunk++) {
      let offset = wide ? Number(buf.readBigUInt64BE(stco.start + 8 + chunk * 8)) : buf.readUInt32BE(stco.start + 8 + chunk * 4);
      for (let i = 0; i < perChunk; i++) {
        // Each sample holds at least a byte of the file, so there are never more samples than bytes.
        if (sample >= listed || sample > totalBytes) return ticks / timescale;
        const size = constantSize || buf.readUInt32BE(stsz.start + 12 + sample * 4);
        offset += size;
        // Samples must lie in the bytes actually received.
        if (offset > totalBytes) return ticks / timescale;
        while (deltaLeft === 0 && ++deltaRun < deltas) {
          deltaLeft = buf.readUInt32BE(stts.start + 8 + deltaRun * 8);
          delta = buf.readUInt32BE(stts.start + 12 + deltaRun * 8);
        }
        if (deltaLeft === 0) return ticks / timescale;
        deltaLeft--;
        if (size > 0) ticks += Math.min(delta, cap);
        sample++;
      }
    }
  }
  return ticks / timescale;
}

function readTrack(buf: Buffer, trak: Box, totalBytes: number): Track | undefined {
  const tkhd = child(buf, trak, "tkhd");
  const mdia = child(buf, trak, "mdia");
  if (!tkhd || !mdia) return undefined;
  const mdhd = child(buf, mdia, "mdhd");
  const hdlr = child(buf, mdia, "hdlr");
  if (!mdhd || !hdlr) return undefined;
  const id = u32(buf, tkhd, tkhd.start + (buf[tkhd.start] === 1 ? 20 : 12));
  const timescale = u32(buf, mdhd, mdhd.start + (buf[mdhd.start] === 1 ? 20 : 12));
  if (id === undefined || !timescale || hdlr.end - hdlr.start < 12) return undefined;
  const handler = buf.toString("latin1", hdlr.start + 8, hdlr.start + 12);
  const stbl = child(buf, mdia, "minf") && child(buf, child(buf, mdia, "minf")!, "stbl");
  const seconds = stbl && handler === "soun" ? tableSeconds(buf, stbl, timescale, totalBytes) : 0;
  return { id, handler, timescale, defaults: { duration: 0, size: 0 }, seconds };
}

/** Adds the seconds of a fragment's audio samples whose bytes lie inside the file. */
function addFragment(buf: Buffer, moofAt: number, tracks: Map<number, Track>, totalBytes: number): void {
  const moof: Box = { type: "moof", start: 8, end: buf.length };
  for (const traf of boxes(buf, moof.start, moof.end)) {
    if (traf.type !== "traf") continue;
    const tfhd = child(buf, traf, "tfhd");
    if (!tfhd || tfhd.end - tfhd.start < 8) continue;
    const flags = buf.readUInt32BE(tfhd.start) & 0xffffff;
    const track = tracks.get(buf.readUInt32BE(tfhd.start + 4));
    if (!track || track.handler !== "soun") continue;
    let at = tfhd.start + 8;
    let base = moofAt;
    if (flags & 0x1) {
      if (at + 8 > tfhd.end) continue;
      base = Number(buf.readBigUInt64BE(at));
      at += 8;
    }
    if (flags & 0x2) at += 4;
    const defaultDuration = flags & 0x8 ? (u32(buf, tfhd, at) ?? 0) : track.defaults.duration;
    if (flags & 0x8) at += 4;
    const defaultSize = flags & 0x10 ? (u32(buf, tfhd, at) ?? 0) : track.defaults.size;
    const cap = track.timescale * maxSampleSeconds;
    let next = base;
    for (const trun of boxes(buf, traf.start, traf.end)) {
      if (trun.type !== "trun" || trun.end - trun.start < 8) continue;
      const runFlags = buf.readUInt32BE(trun.start) & 0xffffff;
      const count = buf.readUInt32BE(trun.start + 4);
      let p = trun.start + 8;
      if (runFlags & 0x1) {
        if (p + 4 > trun.end) continue;
        next = base + buf.readInt32BE(p);
        p += 4;
      }
      if (runFlags & 0x4) p += 4;
      const fields = [0x100, 0x200, 0x400, 0x800].filter((bit) => runFlags & bit).length;
      let ticks = 0;
      // Without per-sample fields nothing bounds the count but the bytes the samples must occupy.
      if (fields === 0 && defaultSize === 0) continue;
      for (let i = 0; i < count && p + fields * 4 <= trun.end; i++) {
        let q = p;
        const duration = runFlags & 0x100 ? buf.readUInt32BE(q) : defaultDuration;
        if (runFlags & 0x100) q += 4;
        const size = runFlags & 0x200 ? buf.readUInt32BE(q) : defaultSize;
        p += fields * 4;
        next += size;
        if (next > totalBytes) break;
        if (size > 0) ticks += Math.min(duration, cap);
      }
      track.seconds += ticks / track.timescale;
    }
  }
}

export function createMp4Meter(): AudioMeter {
  let moov: Buffer | undefined;
  const fragments: { at: number; buf: Buffer }[] = [];

  const box: Step = read(8, (header, at) => {
    const size = header.readUInt32BE(0);
    const type = header.toString("latin1", 4, 8);
    const body = (length: number, headerSize: number): Step | undefined => {
      if (length < 0) return undefined;
      if (type === "moov" || type === "moof") {
        if (length > maxKeptBox) return undefined;
        // Copied: the chunk it came from is not ours to keep.
        return read(length, (bytes) => {
          const whole = Buffer.concat([Buffer.alloc(headerSize), bytes]);
          if (type === "moov") moov ??= whole;
          else fragments.push({ at, buf: whole });
          return box;
        });
      }
      return skip(length, () => box);
    };
    if (size === 1) return read(8, (large) => body(Number(large.readBigUInt64BE(0)) - 16, 16));
    // A box running to the end of the file: nothing after it to read.
    if (size === 0) return type === "moov" || type === "moof" ? body(maxKeptBox, 8) : undefined;
    return body(size - 8, 8);
  });

  const walker = new ByteWalker(box);

  return {
    push: (bytes) => walker.push(bytes),
    finish(totalBytes): Measured {
      if (!moov) return noAudio("the MP4 file has no moov box");
      const root: Box = { type: "moov", start: 8, end: moov.length };
      const tracks = new Map<number, Track>();
      for (const trak of boxes(moov, root.start, root.end)) {
        if (trak.type !== "trak") continue;
        const track = readTrack(moov, trak, totalBytes);
        if (track) tracks.set(track.id, track);
      }
      const mvex = child(moov, root, "mvex");
      if (mvex) {
        for (const trex of boxes(moov, mvex.start, mvex.end)) {
          if (trex.type !== "trex" || trex.end - trex.start < 20) continue;
          const track = tracks.get(moov.readUInt32BE(trex.start + 4));
          if (track) track.defaults = { duration: moov.readUInt32BE(trex.start + 12), size: moov.readUInt32BE(trex.start + 16) };
        }
      }
      if ([...tracks.values()].some((track) => track.handler === "vide")) return { refused: "the MP4 file contains video" };
      for (const fragment of fragments) addFragment(fragment.buf, fragment.at, tracks, totalBytes);
      const audio = [...tracks.values()].filter((track) => track.handler === "soun");
      const seconds = Math.max(0, ...audio.map((track) => track.seconds));
      if (audio.length === 0) return noAudio("the MP4 file has no audio track");
      if (seconds <= 0) return noAudio("the MP4 audio track holds no samples");
      return { durationMs: Math.round(seconds * 1000) };
    },
  };
}
