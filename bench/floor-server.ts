/**
 * The floor of a post read on this machine, the HTTP benchmark's reference for reads (as SHA-256 is for uploads):
 * a framework-free Node `http` server that runs the service's own point SELECT (findPost's statement, one named
 * prepared statement per connection) through a `pg` pool of the service's size and writes the row's JSON. No auth,
 * rate limit, projection, URL signing, envelope or logging: what is left is HTTP, the driver and Postgres.
 *
 *   node --import tsx bench/floor-server.ts    # DATABASE_URL, FLOOR_APP_ID; prints {"port":N} once listening
 */
import { createServer } from "node:http";
import pg from "pg";
import { findPostStatement } from "../core/posts/post-store";

const appId = process.env.FLOOR_APP_ID ?? "bench";
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const prefix = "/api/v1/posts/";

const server = createServer((req, res) => {
  const rkey = req.url?.startsWith(prefix) ? req.url.slice(prefix.length) : "";
  pool.query({ name: "floor_find_post", text: findPostStatement, values: [appId, rkey] }).then(
    ({ rows }) => {
      const body = rows[0] ? JSON.stringify(rows[0]) : '{"error":"not found"}';
      res.writeHead(rows[0] ? 200 : 404, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
      res.end(body);
    },
    (error: unknown) => {
      res.writeHead(500).end(String(error));
    },
  );
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 }));
});
process.on("SIGINT", () => {
  server.close();
  void pool.end();
});
