import type { MiddlewareObj } from "@middy/core";
import * as z from "zod";
import { readJsonBody } from "../read-json-body";
import type { RouteCall } from "../route-call";
import { queryObject, validate, validateParams } from "../validate";

const noQuery = z.strictObject({});

/**
 * Validates path parameters, query and JSON body against the route's schemas; unknown fields are a 400, query
 * parameters too: a route that names none takes none, as the lists refuse one they do not name. The public
 * documents (health, description, reference) are the exception: a probe or a browser may add its own.
 */
export const parseInput = (): MiddlewareObj<RouteCall> => ({
  before: async ({ event: call }) => {
    const { route } = call;
    if (route.params) call.params = validateParams(route.params, call.params);
    if (route.query) call.query = validate(route.query, queryObject(call.req.query), "query");
    else if (route.auth !== "public") validate(noQuery, queryObject(call.req.query), "query");
    if (route.body?.kind === "json") {
      call.body = validate(route.body.schema, await readJsonBody(call.req, route.body.maxBytes), "body");
    }
  },
});
