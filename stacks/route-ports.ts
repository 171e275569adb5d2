import type { RouteDef } from "../core/http/route";

/**
 * What a function reaches outside itself. The stacks turn each port into permissions and variables, so a function
 * gets exactly what its route uses and nothing else.
 * - `sql`: the Aurora cluster over the Data API (also the shared custody proofs and rate limits);
 * - `blobs`: the bucket (read, write, presign);
 * - `dispatch`: sends processing jobs to the queue;
 * - `providers`: the providers' configuration (rendition service URL and token, ElevenLabs key, platform
 *   transcriber), to choose providers at request time or call the rendition service;
 * - `webhooks`: the tenants' webhook URLs and signing secrets, to write and deliver webhook events;
 * - `stages`: runs processing stages itself (Amazon Transcribe jobs).
 */
export type Port = "sql" | "blobs" | "dispatch" | "providers" | "webhooks" | "stages";

/**
 * Ports per route file. This is the one place the stacks learn what a route uses; when the route table carries its
 * ports itself (issue 7), `routePorts` reads them from the route instead.
 */
const portsByFile: Record<string, readonly Port[]> = {
  "create-post": ["sql", "dispatch", "providers", "webhooks"],
  "patch-post": ["sql", "dispatch", "providers", "webhooks"],
  "list-posts": ["sql"],
  "get-post": ["sql"],
  "list-replies": ["sql"],
  "upload-audio": ["sql", "blobs"],
  "create-upload": ["sql", "blobs"],
  "complete-upload": ["sql", "blobs"],
  // format=mp3 builds a missing rendition through the rendition service.
  "get-audio": ["sql", "blobs", "providers"],
  health: ["sql", "blobs"],
  "process-audio": ["sql", "blobs", "providers", "webhooks", "stages"],
  openapi: [],
  reference: [],
  "reference-script": [],
};

/** The functions that are not routes: the queue's stage function, the dead-letter consumer, the sweep. */
export const workerPorts = {
  stage: ["sql", "blobs", "dispatch", "providers", "webhooks", "stages"],
  deadLetter: ["sql", "webhooks"],
  sweep: ["sql", "dispatch", "webhooks"],
} as const satisfies Record<string, readonly Port[]>;

export const routePorts = (route: Pick<RouteDef, "file"> & { ports?: readonly Port[] }): readonly Port[] => {
  if (route.ports) return route.ports;
  const ports = portsByFile[route.file];
  if (!ports) throw new Error(`stacks/route-ports.ts does not know which ports functions/${route.file}.ts uses`);
  return ports;
};

/** Routes whose policy needs tenants (service tokens and app DIDs) and custody proofs. */
export const servesTenants = (route: Pick<RouteDef, "auth">): boolean => route.auth === "actor" || route.auth === "viewer";
