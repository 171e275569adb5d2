import type { RouteDef } from "../core/http/route";

/**
 * What a function reaches outside itself. The stacks turn each port into permissions and variables, so a function
 * gets exactly what its route uses and nothing else.
 * - `sql`: the Aurora cluster over the Data API (also the shared custody proofs and rate limits);
 * - `blobs`: the bucket (read, write, presign);
 * - `dispatch`: sends processing jobs to the queue;
 * - `providers`: runs processing stages (rendition service, Amazon Transcribe, ElevenLabs) and delivers webhooks.
 */
export type Port = "sql" | "blobs" | "dispatch" | "providers";

/**
 * Ports per route file. This is the one place the stacks learn what a route uses; when the route table carries its
 * ports itself (issue 7), `routePorts` reads them from the route instead.
 */
const portsByFile: Record<string, readonly Port[]> = {
  "create-post": ["sql", "dispatch"],
  "patch-post": ["sql", "dispatch"],
  "list-posts": ["sql"],
  "get-post": ["sql"],
  "list-replies": ["sql"],
  "upload-audio": ["sql", "blobs"],
  "create-upload": ["sql", "blobs"],
  "complete-upload": ["sql", "blobs"],
  // format=mp3 builds a missing rendition through the rendition service.
  "get-audio": ["sql", "blobs", "providers"],
  health: ["sql", "blobs"],
  "process-audio": ["sql", "blobs", "providers"],
  openapi: [],
  reference: [],
  "reference-script": [],
};

export const routePorts = (route: Pick<RouteDef, "file"> & { ports?: readonly Port[] }): readonly Port[] => {
  if (route.ports) return route.ports;
  const ports = portsByFile[route.file];
  if (!ports) throw new Error(`stacks/route-ports.ts does not know which ports functions/${route.file}.ts uses`);
  return ports;
};

/** Routes whose policy needs tenants (service tokens and app DIDs) and custody proofs. */
export const servesTenants = (route: Pick<RouteDef, "auth">): boolean => route.auth === "actor" || route.auth === "viewer";
