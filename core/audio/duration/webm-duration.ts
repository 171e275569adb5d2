/**
 * WebM / Matroska: walks EBML element headers, entering Segment, Cluster and BlockGroup (whatever their size,
 * so the unknown-size clusters of live recorders work) and skipping everything else by size. The duration runs
 * from the first audio block's start to the end of the last whole one, never the Info element's stated one, and
 * is bounded by what the blocks can play (an Opus packet states its own length, frame count included; no block
 * plays over 0.5 s a frame). A laced block holds several frames (packets): it lasts all of them.
 */
import { type AudioMeter, type Measured, noAudio } from "./audio-meter";
import { ByteWalker, read, type Step, skip } from "./byte-walker";
import { vint } from "./ebml-vint";
import { lacedOpusSamples } from "./webm-lacing";
import { opusPacketSamples } from "./opus-packet";

const ids = {
  ebml: 0x1a45dfa3,
  segment: 0x18538067,
  info: 0x1549a966,
  timecodeScale: 0x2ad7b1,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  trackType: 0x83,
  codecId: 0x86,
  defaultDuration: 0x23e383,
  cluster: 0x1f43b675,
  timestamp: 0xe7,
  simpleBlock: 0xa3,
  blockGroup: 0xa0,
  block: 0xa1,
  blockDuration: 0x9b,
};
const entered = new Set([ids.segment, ids.cluster, ids.blockGroup]);
/** Boxes of metadata read whole; larger ones are skipped. */
const maxKeptElement = 1024 * 1024;
const maxFrameNs = 500_000_000;
const maxOpusFrameNs = 120_000_000;
/** Laced Opus blocks are read whole to find their frames' TOC bytes (they hold a few KB); larger ones are not. */
const maxLacedOpusBlock = 64 * 1024;

interface Track {
  type: number;
  codec: string;
  defaultDurationNs: number;
  startNs: number;
  endNs: number;
  boundNs: number;
  lastStartNs: number | undefined;
  /** Frames in the block that began at lastStartNs. */
  lastFrames: number;
  /** How long a frame lasted between the last two blocks' starts. */
  frameGapNs: number;
  /** Where the last block ends when that is estimated: not yet in endNs, as the next block's start may cut it. */
  guessedEndNs: number;
}

function* elements(bytes: Buffer): Generator<{ id: number; body: Buffer }> {
  let at = 0;
  while (at < bytes.length) {
    const id = vint(bytes, at, true);
    if (!id) return;
    const size = vint(bytes, at + id.length, false);
    if (!size || size.unknown) return;
    const start = at + id.length + size.length;
    if (start + size.value > bytes.length) return;
    yield { id: id.value, body: bytes.subarray(start, start + size.value) };
    at = start + size.value;
  }
}

const uint = (body: Buffer) => {
  let value = 0;
  for (const byte of body) value = value * 256 + byte;
  return value;
};

export function createWebmMeter(): AudioMeter {
  let scale = 1_000_000;
  const tracks = new Map<number, Track>();
  let clusterTs = 0;
  let sawVideo = false;

  interface Block {
    track: Track;
    startNs: number;
    frames: number;
    /** What the block's own bytes say it plays (an Opus TOC), when they say. */
    ownNs: number | undefined;
  }
  /** A Block in a BlockGroup, waiting for a BlockDuration that may follow it. */
  let pending: Block | undefined;

  const settle = ({ track, startNs, frames, ownNs }: Block, statedNs: number | undefined) => {
    const frameCap = track.codec === "A_OPUS" ? maxOpusFrameNs : maxFrameNs;
    const known = statedNs ?? ownNs ?? (track.defaultDurationNs > 0 ? track.defaultDurationNs * frames : undefined);
    const follows = track.lastStartNs !== undefined && startNs > track.lastStartNs;
    // With nothing stated, a block's frames are taken to last as long as the previous block's did (the gap up to
    // this block over that block's frames): blocks may be laced with any number of frames. That guess ends by the
    // time this block starts (a lace of short frames would otherwise run on past it).
    if (follows) track.frameGapNs = (startNs - track.lastStartNs!) / track.lastFrames;
    track.endNs = Math.max(track.endNs, follows ? Math.min(track.guessedEndNs, startNs) : track.guessedEndNs);
    const dur = Math.max(0, Math.min(known ?? track.frameGapNs * frames, frameCap * frames));
    track.guessedEndNs = known === undefined ? startNs + dur : -Infinity;
    if (known !== undefined) track.endNs = Math.max(track.endNs, startNs + dur);
    track.lastStartNs = startNs;
    track.lastFrames = frames;
    track.startNs = Math.min(track.startNs, startNs);
    track.boundNs += known === undefined ? frameCap * frames : dur;
  };

  const settlePending = () => {
    if (pending) settle(pending, undefined);
    pending = undefined;
  };

  const readTracks = (body: Buffer) => {
    for (const entry of elements(body)) {
      if (entry.id !== ids.trackEntry) continue;
      let number = 0;
      let type = 0;
      let codec = "";
      let defaultDurationNs = 0;
      for (const field of elements(entry.body)) {
        if (field.id === ids.trackNumber) number = uint(field.body);
        else if (field.id === ids.trackType) type = uint(field.body);
        else if (field.id === ids.codecId) codec = field.body.toString("latin1");
        else if (field.id === ids.defaultDuration) defaultDurationNs = uint(field.body);
      }
      if (type === 1) sawVideo = true;
      tracks.set(number, {
        type,
        codec,
        defaultDurationNs,
        startNs: Infinity,
        endNs: -Infinity,
        boundNs: 0,
        lastStartNs: undefined,
        lastFrames: 1,
        frameGapNs: 0,
        guessedEndNs: -Infinity,
      });
    }
  };

  /** The block whose header has been read, counted once all its bytes have arrived. */
  let arriving: Block | undefined;
  let arrivingSimple = false;
  /** An arriving laced Opus block: its head (copied, as the rest may come in a later chunk) and lacing. */
  let lacedHead: Buffer | undefined;
  let lacedAt = 0;
  let lacing = 0;

  const readBlockHead = (head: Buffer): Block | undefined => {
    const number = vint(head, 0, false);
    if (!number || number.length + 3 > head.length) return undefined;
    const track = tracks.get(number.value);
    if (!track || track.type !== 2) return undefined;
    const at = number.length;
    const startNs = (clusterTs + head.readInt16BE(at)) * scale;
    lacing = (head[at + 2]! >> 1) & 3;
    lacedAt = at + 3;
    const frames = lacing === 0 ? 1 : (head[at + 3] ?? 0) + 1;
    const ownNs = track.codec === "A_OPUS" && lacing === 0 && head.length > at + 3 ? (opusPacketSamples(head[at + 3]!, head[at + 4]) * 1_000_000) / 48 : undefined;
    return { track, startNs, frames, ownNs };
  };

  // A block cut short by truncation plays nothing. A SimpleBlock is complete on its own; a Block waits for a
  // BlockDuration that may follow it in its group.
  const blockArrived = (): Step | undefined => {
    if (arriving && arrivingSimple) settle(arriving, undefined);
    else if (arriving) pending = arriving;
    arriving = undefined;
    return element;
  };

  // An element header in three reads: the ID's first byte (its length), the rest of the ID with the size's first
  // byte (its length), then the rest of the size. Decoded in place: this runs for every block of the file.
  let idFirst = 0;
  let idLength = 0;
  let id = 0;
  let sizeFirst = 0;
  let sizeLength = 0;

  const onSize = (rest: Buffer): Step | undefined => {
    let size = sizeFirst & (0xff >> sizeLength);
    let allOnes = size === 0xff >> sizeLength;
    for (let i = 0; i < sizeLength - 1; i++) {
      size = size * 256 + rest[i]!;
      if (rest[i] !== 0xff) allOnes = false;
    }
    // A block group is over once the next block, group or cluster begins.
    if (id === ids.blockGroup || id === ids.cluster || id === ids.simpleBlock) settlePending();
    if (entered.has(id)) return element;
    if (allOnes) return undefined;
    return body(id, size);
  };

  const idRest = (rest: Buffer): Step | undefined => {
    id = idFirst;
    for (let i = 0; i < idLength - 1; i++) id = id * 256 + rest[i]!;
    sizeFirst = rest[idLength - 1]!;
    sizeLength = Math.clz32(sizeFirst) - 23;
    if (sizeLength < 1 || sizeLength > 8) return undefined;
    return read(sizeLength - 1, onSize);
  };

  const element: Step = read(1, (first) => {
    idFirst = first[0]!;
    idLength = Math.clz32(idFirst) - 23;
    if (idLength < 1 || idLength > 4) return undefined;
    return read(idLength, idRest);
  });

  let blockRest = 0;
  const onBlockHead = (bytes: Buffer): Step | undefined => {
    arriving = readBlockHead(bytes);
    // A laced Opus block's frames each state their length, but they lie behind the lace header: read it whole.
    if (arriving?.track.codec === "A_OPUS" && lacing !== 0 && bytes.length + blockRest <= maxLacedOpusBlock) {
      lacedHead = Buffer.from(bytes);
      return read(blockRest, onLacedRest);
    }
    return skip(blockRest, blockArrived);
  };
  const onLacedRest = (rest: Buffer): Step | undefined => {
    const samples = lacedOpusSamples(Buffer.concat([lacedHead!, rest]), lacedAt, lacing);
    if (samples !== undefined) arriving!.ownNs = (samples * 1_000_000) / 48;
    lacedHead = undefined;
    return blockArrived();
  };

  const body = (id: number, size: number): Step | undefined => {
    switch (id) {
      case ids.info:
        if (size > maxKeptElement) break;
        return read(size, (bytes) => {
          for (const field of elements(bytes)) if (field.id === ids.timecodeScale) scale = uint(field.body) || 1_000_000;
          return element;
        });
      case ids.tracks:
        if (size > maxKeptElement) break;
        return read(size, (bytes) => {
          readTracks(bytes);
          return element;
        });
      case ids.timestamp:
        if (size > 8) break;
        return read(size, (bytes) => {
          clusterTs = uint(bytes);
          return element;
        });
      case ids.simpleBlock:
      case ids.block: {
        const head = Math.min(size, 16);
        arrivingSimple = id === ids.simpleBlock;
        blockRest = size - head;
        return read(head, onBlockHead);
      }
      case ids.blockDuration:
        if (size > 8) break;
        return read(size, (bytes) => {
          if (pending) settle(pending, uint(bytes) * scale);
          pending = undefined;
          return element;
        });
    }
    return skip(size, toElement);
  };
  const toElement = () => element;

  const walker = new ByteWalker(element);

  return {
    push: (bytes) => walker.push(bytes),
    finish(): Measured {
      settlePending();
      if (sawVideo) return { refused: "the WebM file contains video" };
      const audio = [...tracks.values()].filter((track) => track.type === 2);
      if (audio.length === 0) return noAudio("the WebM file has no audio track");
      let best = 0;
      for (const track of audio) {
        const endNs = Math.max(track.endNs, track.guessedEndNs);
        if (endNs <= track.startNs) continue;
        best = Math.max(best, Math.min(endNs - track.startNs, track.boundNs));
      }
      if (best <= 0) return noAudio("the WebM audio track holds no blocks");
      return { durationMs: Math.round(best / 1_000_000) };
    },
  };
}
