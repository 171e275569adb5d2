/**
 * What a configuration variable belongs to, and what a function reaches. Each row of the variable table
 * (variables.ts) names its scopes; a function parses with the scopes it reaches, so only their required variables
 * are required of it, and the stacks give each Lambda exactly the variables of its scopes. A route's scopes follow
 * from its `uses`, its auth, its `reads` and its `rateLimit` (core/runtime/lambda/function-scopes.ts); jobs name
 * theirs there too. The Node host serves every route and runs every job: it parses all of them.
 */
export const variableScopes = {
  always: "every function",
  http: "every route (client address, deadline)",
  limits: "rate-limited routes (a route's `rateLimit`)",
  host: "the Node host (`npm start`) alone",
  sql: "the database (`sql` port)",
  blobs: "the blob store (`blobs` port)",
  probes: "`/health`'s probes of both stores (`storeProbes` port)",
  tenants: "routes that serve tenants (`actor`, `viewer` auth): tokens, DIDs, custody",
  system: "system routes (`system` auth)",
  playback: "routes that sign or check playback URLs",
  description: "the OpenAPI description",
  identity: "the build identity `/health` reports",
  dispatch: "dispatching processing jobs",
  providers: "choosing or calling providers (`enrichment` port)",
  renditions: "on-demand mp3 renditions (`renditions` port)",
  webhooks: "writing and delivering webhook events",
  stages: "running processing stages",
  janitor: "sweeping the blob store for debris (the Node host's timer, the janitor Lambda)",
  "rendition-service": "the rendition service (`npm run rendition`, its Lambda)",
} as const;

export type VariableScope = keyof typeof variableScopes;

export const allScopes = Object.keys(variableScopes) as VariableScope[];
