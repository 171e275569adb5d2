/**
 * Ogg (Opus, Vorbis, Speex, FLAC): walks pages, reading each page whole (at most 64 KiB, usually a copy-free
 * view) to see where packets end. The duration is the last granule position of the audio stream, checked
 * against what its packets can hold: Opus packets state their own length (the TOC byte), so an Opus duration is
 * exact; Vorbis, Speex and FLAC packets are bounded by their block sizes. A truncated file ends at its last
 * whole page; a granule below the pre-skip (the first pages of an Opus file alone) is no audio, never negative.
 * Streams side by side (multiplexed) play at once: the longest counts. A chained file plays its links one after
 * another: the links' durations add up.
 */
import { type AudioMeter, type Measured, noAudio } from "./audio-meter";
import { opusPacketSamples } from "./opus-packet";
import { ByteWalker, read, type Step } from "./byte-walker";

type Codec = "opus" | "vorbis" | "speex" | "flac";

interface Stream {
  codec: Codec | "video" | "other";
  rate: number;
  /** Header packets before the first audio packet. */
  headers: number;
  preSkip: number;
  /** Bounds on the samples one audio packet decodes to (Opus: computed per packet instead). */
  minPerPacket: number;
  maxPerPacket: number;
  packets: number;
  /** Opus: samples the packets decode to, from their TOC bytes. */
  opusSamples: number;
  /** The granule of the last page on which a packet ended. */
  granule: number | undefined;
  /** Packets ended so far, headers included. */
  ended: number;
  /** Its end-of-stream page has been seen. */
  closed: boolean;
  /** The packet being assembled (it may span pages): its length so far and first two bytes. */
  partLength: number;
  first: number;
  second: number | undefined;
}

function identify(stream: Stream, packet: Buffer): void {
  const text = (from: number, to: number) => packet.toString("latin1", from, to);
  if (text(0, 8) === "OpusHead" && packet.length >= 19) {
    Object.assign(stream, { codec: "opus", rate: 48_000, headers: 2, preSkip: packet.readUInt16LE(10) });
  } else if (packet[0] === 1 && text(1, 7) === "vorbis" && packet.length >= 30) {
    const sizes = packet[28]!;
    const short = 2 ** (sizes & 0x0f);
    const long = 2 ** (sizes >> 4);
    // Each packet after the first decodes to a quarter of its block plus a quarter of the previous one.
    Object.assign(stream, { codec: "vorbis", rate: packet.readUInt32LE(12), headers: 3, minPerPacket: short / 2, maxPerPacket: long / 2 });
  } else if (text(0, 8) === "Speex   " && packet.length >= 80) {
    const perPacket = packet.readUInt32LE(56) * Math.max(1, packet.readUInt32LE(64));
    Object.assign(stream, { codec: "speex", rate: packet.readUInt32LE(36), headers: 2 + packet.readUInt32LE(68), maxPerPacket: perPacket });
  } else if (packet[0] === 0x7f && text(1, 5) === "FLAC" && text(9, 13) === "fLaC" && packet.length >= 30) {
    // STREAMINFO follows its 4-byte block header at 13: max block size at +2, sample rate in the 20 bits at +10.
    const info = 17;
    const rate = (packet[info + 10]! << 12) | (packet[info + 11]! << 4) | (packet[info + 12]! >> 4);
    Object.assign(stream, { codec: "flac", rate, headers: 1 + packet.readUInt16BE(7), maxPerPacket: packet.readUInt16BE(info + 2) });
  } else if (packet[0] === 0x80 && text(1, 7) === "theora") {
    stream.codec = "video";
  } else if (text(0, 4) === "BBCD" || text(1, 6) === "video" || text(1, 6) === "daala") {
    stream.codec = "video";
  }
}

export function createOggMeter(): AudioMeter {
  /** The stream each serial number last began. */
  const streams = new Map<number, Stream>();
  /** The links of a chained file, in order, each holding the streams multiplexed in it. */
  const links: Stream[][] = [];
  /** Streams of the last link still open. */
  let open = 0;

  const endPacket = (stream: Stream) => {
    if (stream.ended++ < stream.headers || stream.partLength === 0) return;
    stream.packets += 1;
    if (stream.codec === "opus") stream.opusSamples += opusPacketSamples(stream.first, stream.second);
  };

  const page: Step = read(27, (head) => {
    if (head.toString("latin1", 0, 4) !== "OggS" || head[4] !== 0) return undefined;
    const flags = head[5]!;
    const granule = Number(head.readBigInt64LE(6));
    const serial = head.readUInt32LE(14);
    const segments = head[26]!;
    return read(segments, (table) => {
      let bodySize = 0;
      for (const lacing of table) bodySize += lacing;
      return read(bodySize, (body) => {
        let stream = streams.get(serial);
        // A beginning-of-stream page starts a stream, and only it; it may reuse the serial of one that has ended
        // (the same file twice, concatenated).
        if (!stream || (stream.closed && flags & 0x02)) {
          if (!(flags & 0x02)) return page;
          stream = {
            codec: "other", rate: 0, headers: 0, preSkip: 0, minPerPacket: 0, maxPerPacket: 0, packets: 0,
            opusSamples: 0, granule: undefined, ended: 0, closed: false, partLength: 0, first: 0, second: undefined,
          };
          streams.set(serial, stream);
          // A stream beginning once every stream before it has ended starts the next link of a chain.
          if (open === 0) links.push([]);
          links.at(-1)!.push(stream);
          open += 1;
          let firstEnd = 0;
          while (firstEnd < table.length && table[firstEnd] === 255) firstEnd++;
          identify(stream, body.subarray(0, Math.min(body.length, 255 * (firstEnd + 1))));
        }
        if (flags & 0x04 && !stream.closed) {
          stream.closed = true;
          open -= 1;
        }
        if (stream.codec === "video" || stream.codec === "other") return page;
        // Walk the lacing table: a value below 255 ends a packet.
        let at = 0;
        let ended = false;
        for (const lacing of table) {
          if (stream.partLength === 0 && lacing > 0) stream.first = body[at]!;
          if (stream.partLength <= 1 && stream.partLength + lacing >= 2) stream.second = body[at + 1 - stream.partLength];
          stream.partLength += lacing;
          at += lacing;
          if (lacing < 255) {
            endPacket(stream);
            stream.partLength = 0;
            stream.second = undefined;
            ended = true;
          }
        }
        if (ended && granule >= 0) stream.granule = granule;
        return page;
      });
    });
  });

  const walker = new ByteWalker(page);

  return {
    push: (bytes) => walker.push(bytes),
    finish(): Measured {
      if (links.some((link) => link.some((stream) => stream.codec === "video"))) return { refused: "the Ogg file contains video" };
      let total: number | undefined;
      for (const link of links) {
        let longest: number | undefined;
        for (const stream of link) {
          const ms = streamMs(stream);
          if (ms !== undefined) longest = Math.max(longest ?? 0, ms);
        }
        if (longest !== undefined) total = (total ?? 0) + longest;
      }
      if (total === undefined) return noAudio("no audio packets in the Ogg file");
      return { durationMs: Math.round(total) };
    },
  };
}

/** How long one stream plays, in ms unrounded (a chain's links add up); undefined when it holds no audio. */
function streamMs(stream: Stream): number | undefined {
  if (stream.codec === "video" || stream.codec === "other" || stream.rate < 1000 || stream.packets === 0) return undefined;
  let samples: number;
  if (stream.codec === "opus") {
    const decoded = stream.opusSamples - stream.preSkip;
    // End trimming may drop up to one packet's worth from what the packets decode to.
    const granule = stream.granule === undefined ? decoded : stream.granule - stream.preSkip;
    samples = Math.min(decoded, Math.max(granule, decoded - 5760));
  } else {
    const most = stream.packets * stream.maxPerPacket;
    const least = Math.max(0, (stream.packets - 1) * stream.minPerPacket - stream.maxPerPacket);
    samples = Math.min(most, Math.max(least, stream.granule ?? most));
  }
  return samples > 0 ? (samples * 1000) / stream.rate : undefined;
}
