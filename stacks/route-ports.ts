import type { PortName } from "../core/deps";
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
 * - `stages`: runs processing stages itself (Amazon Transcribe jobs);
 * - `probes`: asks whether each store holds anything (/health): one Data API statement and a one-key bucket listing.
 */
export type Port = "sql" | "blobs" | "dispatch" | "providers" | "webhooks" | "stages" | "probes";

/**
 * What a route's Lambda reaches, from the ports its route table entry `uses` (and its auth): `enrichment` chooses
 * providers, writes webhook events and dispatches at request time; on the system route it also runs the pass.
 */
const infrastructureOf: Record<PortName, readonly Port[]> = {
  sql: ["sql"],
  blobs: ["blobs"],
  enrichment: ["dispatch", "providers", "webhooks"],
  renditions: ["providers"],
  storeProbes: ["probes"],
};

export const routePorts = (route: Pick<RouteDef, "uses" | "auth">): readonly Port[] => {
  const ports = new Set(route.uses.flatMap((name) => infrastructureOf[name]));
  if (route.uses.includes("enrichment") && route.auth === "system") ports.add("stages");
  return [...ports];
};

/** The functions that are not routes: the queue's stage function, the dead-letter consumer, the sweep. */
export const workerPorts = {
  stage: ["sql", "blobs", "dispatch", "providers", "webhooks", "stages"],
  deadLetter: ["sql", "webhooks"],
  sweep: ["sql", "dispatch", "webhooks"],
} as const satisfies Record<string, readonly Port[]>;

/** Routes whose policy needs tenants (service tokens and app DIDs) and custody proofs. */
export const servesTenants = (route: Pick<RouteDef, "auth">): boolean => route.auth === "actor" || route.auth === "viewer";
