import type { RouteImpl } from "../core/http/route-call";
import completeUpload from "./complete-upload";
import createPost from "./create-post";
import createUpload from "./create-upload";
import getAudio from "./get-audio";
import getPost from "./get-post";
import health from "./health";
import listPosts from "./list-posts";
import listReplies from "./list-replies";
import listWebhookEvents from "./list-webhook-events";
import openapi from "./openapi";
import patchPost from "./patch-post";
import processAudio from "./process-audio";
import referenceScript from "./reference-script";
import redeliverWebhookEvents from "./redeliver-webhook-events";
import reference from "./reference";
import uploadAudio from "./upload-audio";

/**
 * The route table: the one list the Node host mounts, the stacks turn into one Lambda each (granting only the
 * ports in its `uses`), and the OpenAPI description is generated from. Each route's policy (auth, rate limit,
 * ports, schemas) opens its own file in `functions/`, followed by its behaviour; this table imports the route files,
 * never the reverse, so no route file (and no Lambda bundle) holds another route's code, and `core/` stays free of
 * `functions/` (only the Node host's entry, a composition root, reads this table).
 *
 * To add a route: write `functions/<file>.ts` like its neighbours (`export const route = defineRoute({...})`,
 * `export default implement(route, ...)`, `export const handler = lambda(impl, { <a loader per port in uses> })`),
 * add it here, and run `npm run openapi` to regenerate `functions/openapi.json`.
 */
export const routeImpls = {
  createPost,
  listPosts,
  getPost,
  listReplies,
  patchPost,
  processAudio,
  listWebhookEvents,
  redeliverWebhookEvents,
  uploadAudio,
  createUpload,
  completeUpload,
  getAudio,
  health,
  openapi,
  reference,
  referenceScript,
} satisfies Record<string, RouteImpl>;

export type RouteImpls = typeof routeImpls;

/** Each route's policy by name (`routes.createPost.path`). */
export const routes = Object.fromEntries(Object.entries(routeImpls).map(([name, impl]) => [name, impl.route])) as {
  [K in keyof RouteImpls]: RouteImpls[K]["route"];
};

export const routeList = Object.values(routes);
