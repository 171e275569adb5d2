import { firstRead, orderedText } from "../sql/first-read";
import type { Sql } from "../sql/port";
import { placeholders } from "../sql/placeholders";
import { partBytes } from "../sql/json-parts";
import { inlinedBytes, partOrder } from "./artifact-parts";
import { blobJoin, findPostRead, postColumns, postRows, postTextColumns, readPostRows, type PostRow } from "./post-row";

/** findPost's statement on its own, without a rate-limit take; the HTTP benchmark's floor server runs it too. */
export const findPostStatement = orderedText(findPostRead("", ""));

/**
 * One post of a tenant, or null (another tenant's post is unknown too). One statement, the request's first read
 * (a read route's rate limits ride in it), and more only for artifacts too large to travel with it (artifact-parts.ts).
 */
export const findPost = async (sql: Sql, appId: string, rkey: string): Promise<PostRow | null> => {
  const rows = await firstRead(sql, findPostRead(appId, rkey));
  const [post] = await readPostRows(sql, appId, rows);
  return post ?? null;
};

export type PostList =
  | { kind: "own"; authorId: string; postKind?: "prompt" | "reply" }
  | { kind: "root-author"; rootAuthorId: string; postKind?: "prompt" | "reply" }
  | { kind: "replies"; parentUri: string; parentRkey: string };

/**
 * The Data API refuses an answer over 1 MiB of JSON, which carries each text value as a string escaped again (a `"`
 * or `\` costs two bytes; JSON text has its control characters escaped already, the other text columns refuse them,
 * and other characters travel as UTF-8) and bytes as base64. A page holds at most this many bytes of that JSON as
 * `rowBytes` counts it; the rest of the cap is for the answer's column metadata.
 */
export const pageByteBudget = 960 * 1024;
/** Each row's framing in that JSON (about 25 fields) with its short values (TIDs, CIDs, MIME types, numbers). */
const rowFraming = 1024;
/**
 * Each row of a read route's first read also carries the rate limits it took (take-with-first-query.ts): two
 * limiters' JSON, one keyed on the acting actor (up to 256 characters: 1 KB once escaped twice).
 */
const rateLimitColumn = 2048;
/**
 * A text column's bytes once the Data API has escaped it, at worst: every byte twice. Counting the quotes and
 * backslashes instead (translate) would fill pages of long text better but costs a sixth of the page's statement.
 */
const escapedBytes = (column: string) => `coalesce(2 * octet_length(${column}::text), 0)`;
/** The rows a post `x` sends: its own, and one per part of the artifacts that travel with it. */
const rowsOf = (x: string) => `(1 + CASE WHEN ${inlinedBytes(x)} > 0
    THEN (coalesce(octet_length(${x}.transcript_body), 0) + ${partBytes - 1}) / ${partBytes} + (coalesce(octet_length(${x}.waveform_body), 0) + ${partBytes - 1}) / ${partBytes}
    ELSE 0 END)`;
/** What a post `x` costs in the Data API's answer: its text columns escaped, its inlined artifacts in base64, and its rows. */
const rowBytes = (x: string) => `(${postTextColumns.map((c) => escapedBytes(`${x}.${c}`)).join(" + ")}
    + (${inlinedBytes(x)} * 4 + 2) / 3 + ${rowsOf(x)} * ${rowFraming + rateLimitColumn})`;

/**
 * Lambda answers at most 6 MB, with the body's quotes escaped, and artifacts too large to travel inline are read
 * after the page (an hour of transcript words and waveform is about 1.3 MB), so a page also stops once its posts'
 * artifacts, inline or not, pass this many bytes.
 */
export const pageArtifactBudget = 4 * 1024 * 1024;
const artifactBytes = (x: string) => `(coalesce(octet_length(${x}.transcript_body), 0) + coalesce(octet_length(${x}.waveform_body), 0))`;

export interface Page {
  items: PostRow[];
  nextCursor: string | null;
  /** False when the cursor does not name a post of this list. */
  cursorValid: boolean;
  /** False when a replies list's parent does not exist. */
  anchorFound: boolean;
}

/**
 * One page of a list in one statement, the request's first read (a read route's rate limits ride in it): the page
 * (one row more than asked, to know whether more exist), whether the cursor belongs to this very list, and, for
 * replies, whether the parent exists.
 */
export const listPosts = async (sql: Sql, appId: string, list: PostList, cursor: string | undefined, limit: number): Promise<Page> => {
  const p = placeholders();
  const app = p.add(appId);
  const filters = [`p.app_id = ${app}`];
  let anchor = "true";
  switch (list.kind) {
    case "own":
      filters.push(`p.author_id = ${p.add(list.authorId)}`);
      break;
    case "root-author":
      filters.push(`p.root_author_id = ${p.add(list.rootAuthorId)}`, `p.kind = 'reply'`);
      break;
    case "replies":
      filters.push(`p.parent_uri = ${p.add(list.parentUri)}`, `p.kind = 'reply'`);
      anchor = `EXISTS (SELECT 1 FROM posts a WHERE a.app_id = ${app} AND a.rkey = ${p.add(list.parentRkey)})`;
      break;
  }
  if (list.kind !== "replies" && list.postKind) filters.push(`p.kind = ${p.add(list.postKind)}`);
  const where = filters.join(" AND ");
  // Posts lists are newest first; a thread's replies read oldest first.
  const [order, after] = list.kind === "replies" ? ["ASC", ">"] : ["DESC", "<"];
  const c = p.add(cursor ?? null);
  // The page stops early once its rows pass pageByteBudget, so the answer stays under the Data API's 1 MiB response
  // cap, or its artifacts pass pageArtifactBudget (the first row always comes); nextCursor continues from the last
  // row returned.
  const rows = await firstRead(sql, {
    text: `WITH page AS MATERIALIZED (
       SELECT ${postColumns} FROM posts p ${blobJoin}
        WHERE ${where} AND (${c}::text IS NULL OR p.rkey ${after} ${c}::text)
        ORDER BY p.rkey ${order} LIMIT ${p.add(limit + 1)}::int
     ), kept AS MATERIALIZED (
       SELECT sized.* FROM (
         SELECT page.*, row_number() OVER w AS svc_n, sum(${rowBytes("page")}) OVER w AS svc_bytes_through,
                sum(${artifactBytes("page")}) OVER w AS svc_artifact_bytes_through
           FROM page WINDOW w AS (ORDER BY page.rkey ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
       ) AS sized
        WHERE sized.svc_n = 1
           OR (sized.svc_bytes_through <= ${p.add(pageByteBudget)}::bigint AND sized.svc_artifact_bytes_through <= ${p.add(pageArtifactBudget)}::bigint)
     )
     SELECT kept_rows.*, (SELECT count(*) FROM page)::int AS fetched,
            (${c}::text IS NULL OR EXISTS (SELECT 1 FROM posts p WHERE ${where} AND p.rkey = ${c}::text)) AS cursor_valid,
            ${anchor} AS anchor_found
       FROM (SELECT 1) AS one LEFT JOIN (${postRows("kept")}) AS kept_rows ON true`,
    params: p.values,
    orderBy: (rows) => `${rows}.rkey ${order}, ${partOrder(rows)}`,
  });
  const first = rows[0] ?? {};
  const postRowsRead = rows.filter((r) => r.rkey !== null && r.rkey !== undefined);
  const kept = postRowsRead.filter((r) => Number(r.part_no) === 0).length;
  const items = await readPostRows(sql, appId, postRowsRead, limit);
  const more = kept > limit || Number(first.fetched ?? 0) > kept;
  return {
    items,
    nextCursor: more ? items[items.length - 1]!.rkey : null,
    cursorValid: first.cursor_valid === true,
    anchorFound: first.anchor_found === true,
  };
};

export interface ReplyTargets {
  parent: { rkey: string; cid: string; kind: "prompt" | "reply"; rootUri: string | null; rootAuthorId: string | null; branchAuthorId: string | null } | null;
  root: { rkey: string; cid: string; kind: "prompt" | "reply" } | null;
  blob: { size: number } | null;
}

/** Everything a create must check against stored state, in one statement: the reply's parent and root, and the embedded blob. */
export const findReplyTargets = async (
  sql: Sql,
  appId: string,
  refs: { parentRkey?: string; rootRkey?: string; blob?: { cid: string; mimeType: string } },
): Promise<ReplyTargets> => {
  const [row] = await sql.query(
    `SELECT
       (SELECT json_build_object('rkey', rkey, 'cid', cid, 'kind', kind, 'rootUri', root_uri,
                                 'rootAuthorId', root_author_id, 'branchAuthorId', branch_author_id)
          FROM posts WHERE app_id = $1 AND rkey = $2) AS parent,
       (SELECT json_build_object('rkey', rkey, 'cid', cid, 'kind', kind)
          FROM posts WHERE app_id = $1 AND rkey = $3) AS root,
       (SELECT json_build_object('size', size) FROM blobs WHERE app_id = $1 AND cid = $4 AND mime_type = $5) AS blob`,
    [appId, refs.parentRkey ?? null, refs.rootRkey ?? null, refs.blob?.cid ?? null, refs.blob?.mimeType ?? null],
  );
  return { parent: (row?.parent as ReplyTargets["parent"]) ?? null, root: (row?.root as ReplyTargets["root"]) ?? null, blob: (row?.blob as ReplyTargets["blob"]) ?? null };
};
