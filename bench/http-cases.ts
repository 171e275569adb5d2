/**
 * The benchmark's cases, each against a started server: create c=1 and c=16, get c=1 and c=16, list c=16, and
 * multipart uploads of real MP3 audio (64 KiB to 25 MiB) next to SHA-256 of the same bytes. Rate limits stay on:
 * every request has a fresh actor and a fresh X-Forwarded-For (the server trusts one proxy hop).
 * BENCH_UPLOAD_CONCURRENCY (default 2) uploads at once; BENCH_UPLOAD_FILES adds files of other types.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { encodedNoise } from "../test/support/audio-fixtures";
import { request } from "./http-request";
import { benchSeconds, load, selected, type Result } from "./load-runner";
import { benchToken, type Server } from "./server-process";

let sequence = 0;
const fresh = () => {
  const n = ++sequence;
  return { actor: `bench-${n}`, ip: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
};

const authed = (extra: Record<string, string> = {}) => {
  const { actor, ip } = fresh();
  return { authorization: `Bearer ${benchToken}`, "x-svc-acting-actor": actor, "x-forwarded-for": ip, ...extra };
};

const postBody = (i: number) => Buffer.from(JSON.stringify({ text: `bench post ${i} ${"lorem ipsum ".repeat(8)}` }));

function multipart(bytes: Buffer, type: string): { body: Buffer; contentType: string } {
  const boundary = `----bench${randomBytes(8).toString("hex")}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip"\r\nContent-Type: ${type}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, bytes, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Real 320 kb/s MP3 without a Xing header, cut to exactly `size` bytes (a truncated last frame is what users send too). */
async function mp3Of(size: number): Promise<Buffer> {
  const seconds = Math.ceil((size * 8) / 320_000) + 1;
  const fixture = await encodedNoise(`bench-mp3-${seconds}s`, "audio/mpeg", seconds, [
    "-c:a", "libmp3lame", "-b:a", "320k", "-write_xing", "0", "-id3v2_version", "0", "-f", "mp3",
  ]);
  return fixture.bytes.subarray(0, size);
}

/** SHA-256 over `bytes` in this process, hashed again and again for about half a second. */
function sha256MiBps(bytes: Buffer): number {
  createHash("sha256").update(bytes).digest();
  let hashed = 0;
  const t = performance.now();
  while (performance.now() - t < 500 || hashed < 3 * bytes.length) {
    createHash("sha256").update(bytes).digest();
    hashed += bytes.length;
  }
  return hashed / (1024 * 1024) / ((performance.now() - t) / 1000);
}

/** BENCH_UPLOAD_FILES="a.m4a=audio/m4a,b.ogg=audio/ogg": also upload these files (each type at its real size). */
const extraUploads = async (): Promise<[string, Buffer, string][]> =>
  Promise.all(
    (process.env.BENCH_UPLOAD_FILES ?? "")
      .split(",")
      .filter(Boolean)
      .map(async (entry) => {
        const [file, type] = entry.split("=") as [string, string];
        return [path.basename(file), await readFile(file), type] as [string, Buffer, string];
      }),
  );

async function uploads(server: Server, sizes: [string, number][]): Promise<(Result | undefined)[]> {
  const results: (Result | undefined)[] = [];
  const cases: [string, Buffer, string][] = [];
  for (const [label, size] of sizes) cases.push([label, await mp3Of(size), "audio/mpeg"]);
  cases.push(...(await extraUploads()));
  for (const [label, bytes, type] of cases) {
    const size = bytes.length;
    const { body, contentType } = multipart(bytes, type);
    // Each upload differs in a few bytes in the middle of the file (payload, not a header), so every one is a new
    // CID: a real stage, fsync and rename, never the cheaper already-stored path.
    // Each worker owns a body built before the clock starts, changed in place between its own requests (never
    // while one is in flight), so the client sends from memory it already has and copies nothing.
    const middle = body.indexOf(bytes.subarray(0, 64)) + Math.floor(size / 2);
    const concurrency = Number(process.env.BENCH_UPLOAD_CONCURRENCY ?? 2);
    const bodies = Array.from({ length: concurrency }, () => Buffer.from(body));
    let n = 0;
    const runSeconds = size > 4 * 1024 * 1024 ? Math.max(benchSeconds, 4) : benchSeconds;
    // The reference is measured just before and just after the uploads, and their mean taken, so a machine whose
    // speed drifts during the case (other jobs on a shared one) moves both sides of the ratio alike.
    const shaBefore = selected(`upload ${label}`) ? sha256MiBps(bytes) : 0;
    const result = await load(
      server,
      `upload ${label}`,
      concurrency,
      (worker) => {
        const own = bodies[worker]!;
        own.writeUInt32BE(++n, middle);
        return { method: "POST", path: "/api/v1/audio/upload", headers: authed({ "content-type": contentType }), body: own };
      },
      201,
      runSeconds,
      6,
    );
    if (!result) continue;
    const mibps = (result.perSecond * size) / (1024 * 1024);
    const sha = (shaBefore + sha256MiBps(bytes)) / 2;
    const { user, system, client } = result.cpuSplit;
    result.extra =
      `${mibps.toFixed(0)} MiB/s; SHA-256 ${sha.toFixed(0)} MiB/s (${((100 * mibps) / sha).toFixed(0)}%); ` +
      `server CPU ${user.toFixed(0)} user + ${system.toFixed(0)} sys, client ${client.toFixed(0)} ms/req`;
    results.push(result);
  }
  return results;
}

/** A fresh actor's prompt and `count` replies to it from other fresh actors: the prompt's author, whose threads a list pages through. */
async function thread(server: Server, count: number): Promise<string> {
  const headers = authed({ "content-type": "application/json" });
  const author = headers["x-svc-acting-actor"]!;
  const created = await request({ port: server.port, method: "POST", path: "/api/v1/posts", headers, body: postBody(0) });
  const { postId } = (JSON.parse(created.body) as { data: { postId: string } }).data;
  const read = await request({ port: server.port, method: "GET", path: `/api/v1/posts/${postId}`, headers: authed() });
  const { uri, cid } = (JSON.parse(read.body) as { data: { uri: string; cid: string } }).data;
  for (let k = 0; k < count; k++) {
    const body = Buffer.from(JSON.stringify({ text: `bench reply ${k}`, reply: { root: { uri, cid }, parent: { uri, cid } } }));
    const res = await request({ port: server.port, method: "POST", path: "/api/v1/posts", headers: authed({ "content-type": "application/json" }), body });
    if (res.status !== 201) throw new Error(`reply answered ${res.status} ${res.body.slice(0, 300)}`);
  }
  return author;
}

/** A read case's rate as a share of the floor server's at the same concurrency (`of` names which floor). */
const ofFloor = (result: Result | undefined, floor: Result | undefined, of = "") => {
  if (result && floor) result.extra = `${((100 * result.perSecond) / floor.perSecond).toFixed(0)}% of the floor${of}`;
  return result;
};

/**
 * Every case against `server`. With `floor` (a start of the floor server on the same database), the floor's reads
 * of the same posts run just before the service's, and each read case prints its rate as a share of the floor's.
 */
export async function runAll(server: Server, floor?: () => Promise<Server>): Promise<Result[]> {
  const results: (Result | undefined)[] = [];
  let i = 0;
  const create = () => ({ method: "POST", path: "/api/v1/posts", headers: authed({ "content-type": "application/json" }), body: postBody(++i) });
  results.push(await load(server, "create c=1", 1, create, 201));
  results.push(await load(server, "create c=16", 16, create, 201));
  const ids: string[] = [];
  for (let k = 0; k < 50; k++) {
    const res = await request({ port: server.port, ...create() });
    const created = JSON.parse(res.body) as { data?: { postId?: string }; postId?: string };
    const id = created.data?.postId ?? created.postId;
    if (!id) throw new Error(`create answered ${res.status} ${res.body.slice(0, 300)}`);
    ids.push(id);
  }
  let g = 0;
  const get = () => ({ method: "GET", path: `/api/v1/posts/${ids[g++ % ids.length]}`, headers: authed() });
  const floors: (Result | undefined)[] = [];
  if (floor && (selected("floor get c=1") || selected("floor get c=16"))) {
    const floorServer = await floor();
    try {
      floors.push(await load(floorServer, "floor get c=1", 1, get, 200));
      floors.push(await load(floorServer, "floor get c=16", 16, get, 200));
    } finally {
      await floorServer.stop();
    }
  }
  results.push(...floors);
  const [floor1, floor16] = floors;
  results.push(ofFloor(await load(server, "get c=1", 1, get, 200), floor1));
  results.push(ofFloor(await load(server, "get c=16", 16, get, 200), floor16));
  // A real page: replies in one author's threads, 20 of 30, read by a fresh viewer each time.
  if (selected("list")) {
    const rootAuthor = await thread(server, 30);
    const list = () => ({ method: "GET", path: `/api/v1/posts?rootAuthor=${encodeURIComponent(rootAuthor)}&limit=20`, headers: authed() });
    const page = JSON.parse((await request({ port: server.port, ...list() })).body) as { data: { items: unknown[] } };
    if (page.data.items.length !== 20) throw new Error(`the list page has ${page.data.items.length} items, not 20`);
    results.push(ofFloor(await load(server, "list (page of 20) c=16", 16, list, 200), floor16, "'s single read"));
  }
  results.push(
    ...(await uploads(server, [
      ["64 KiB", 64 * 1024],
      ["1 MiB", 1024 * 1024],
      ["5 MiB", 5 * 1024 * 1024],
      ["25 MiB", 25 * 1024 * 1024],
    ])),
  );
  return results.filter((result) => result !== undefined);
}
