import type { MiddlewareObj } from "@middy/core";
import { readJsonBody } from "../read-json-body";
import type { RouteCall } from "../route-call";
import { queryObject, validate, validateParams } from "../validate";

/** Validates path parameters, query and JSON body against the route's schemas; unknown fields are a 400. */
export const parseInput = (): MiddlewareObj<RouteCall> => ({
  before: async ({ event: call }) => {
    const { route } = call;
    if (route.params) call.params = validateParams(route.params, call.params);
    if (route.query) call.query = validate(route.query, queryObject(call.req.query), "query");
    if (route.body?.kind === "json") {
      call.body = validate(route.body.schema, await readJsonBody(call.req, route.body.maxBytes), "body");
    }
  },
});
