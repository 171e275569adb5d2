import type { z } from "zod";
import type { VariableScope } from "../config/variable-scopes";
import type { PortName } from "../deps";
import type { ErrorCode } from "../domain-error";
import type { RateLimitClass } from "../rate-limit/policies";

/**
 * What each auth policy means, decided once: which credential it takes and whether an acting actor comes with it.
 * authenticate enforces it, the OpenAPI description documents it, and the caller types (`CallerOf`) follow it.
 * - `actor`: service token and `X-Svc-Acting-Actor` required;
 * - `viewer`: service token, acting actor optional (viewer-less projection without it);
 * - `anonymous`: no credential (capability URLs), limited by client IP;
 * - `system`: `SYSTEM_AUTH_TOKEN`, fails closed with 503 when unset;
 * - `public`: no credential and no rate limit (health, description, reference).
 */
export const authPolicies = {
  actor: { credential: "service-token", actor: "required" },
  viewer: { credential: "service-token", actor: "optional" },
  anonymous: { credential: "none", actor: "none" },
  system: { credential: "system-token", actor: "none" },
  public: { credential: "none", actor: "none" },
} as const satisfies Record<string, { credential: "service-token" | "system-token" | "none"; actor: "required" | "optional" | "none" }>;

export type AuthPolicy = keyof typeof authPolicies;

export type { RateLimitClass };

export type HttpMethod = "GET" | "POST" | "PATCH";

export interface RouteDef {
  /** Also the function file name: `functions/<file>.ts` exports `route`, `default` (the implementation) and `handler` (the Lambda). */
  file: string;
  method: HttpMethod;
  /** Path template with `{param}` segments, as API Gateway writes them. */
  path: string;
  summary: string;
  auth: AuthPolicy;
  rateLimit: RateLimitClass | null;
  /**
   * The ports the route's behaviour and policy use (`core/deps.ts`): a rate limit or an idempotency key needs `sql`.
   * Composition roots build only these, and the stacks grant the function only their permissions.
   */
  uses: readonly PortName[];
  /**
   * Configuration the route reads beyond its ports' and its auth's (core/config/variable-scopes.ts): `playback`
   * signs or checks playback URLs, `description` serves the OpenAPI description, `identity` reports the build. With
   * `uses` and `auth` it decides the variables the route's Lambda is given and requires.
   */
  reads?: readonly RouteReads[];
  /** Success status. */
  status: number;
  /** How the request body is read. */
  body?: { kind: "json"; schema: z.ZodType; maxBytes: number } | { kind: "multipart"; field: string; partTypes: readonly string[] };
  query?: z.ZodType;
  params?: z.ZodType;
  /** Schema of `data` in the success envelope; absent for raw responses (bytes, redirects, HTML). */
  response?: z.ZodType;
  /** Content type of a raw success response, for the description. */
  produces?: string;
  /** Honours `Idempotency-Key`. */
  idempotent?: boolean;
  /**
   * Runs a whole processing pass (the task queue's worker URL): on the Node host it is bounded by the pass's own time
   * limit, not SVC_REQUEST_DEADLINE_MS, since an answer before the pass ends would tell the queue the job is over or
   * failed while it still runs. A Lambda is bounded by its own time either way.
   */
  runsAPass?: boolean;
  /** Answers HEAD like GET without a body (see `routeMethods`). */
  head?: boolean;
  /** Excluded from the public description (`/api/v1/system/*`). */
  internal?: boolean;
  /** Answers besides `status` that are not errors (partial content, redirects, not modified), for the description. */
  otherResponses?: Readonly<Record<number, string>>;
  /** Error codes this route can answer besides the ones its policy implies, for the description. */
  errors?: ErrorCode[];
  /** Never answers 500 (/health), so the description lists none. */
  neverFails?: boolean;
  /** What a caller must know beyond the summary (Markdown), for the description. */
  description?: string;
  /** Working calls, shown by the reference page (`x-codeSamples`); a test runs each one. */
  codeSamples?: readonly CodeSample[];
}

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

export type RouteReads = Extract<VariableScope, "playback" | "description" | "identity">;

export const defineRoute = <const R extends RouteDef>(route: R): R => route;

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export type RouteBody<R extends RouteDef> = R["body"] extends { kind: "json"; schema: infer S } ? Infer<S> : undefined;
export type RouteQuery<R extends RouteDef> = Infer<R["query"]>;
export type RouteParams<R extends RouteDef> = Infer<R["params"]>;
export type RouteData<R extends RouteDef> = Infer<R["response"]>;

/** The methods a route answers: its own, and HEAD when it declares `head` (answered like GET, without a body). */
export const routeMethods = (route: Pick<RouteDef, "method" | "head">): string[] => (route.head ? [route.method, "HEAD"] : [route.method]);

/** Whether a response to `method` carries no body (HEAD), wherever a response is written. */
export const isHead = (method: string): boolean => method.toUpperCase() === "HEAD";
