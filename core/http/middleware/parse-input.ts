import type { MiddlewareObj } from "@middy/core";
import * as z from "zod";
import { readJsonBody } from "../read-json-body";
import type { RouteCall } from "../route-call";
import { validationError } from "../../domain-error";
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
    else if (route.auth !== "public" && call.req.query.size > 0) validate(noQuery, queryObject(call.req.query), "query");
    // No route decodes a compressed body: gzip read as JSON or audio would fail with a message about something else.
    const coding = call.req.headers["content-encoding"]?.trim().toLowerCase();
    if (route.body && coding && coding !== "identity") {
      throw validationError(`Content-Encoding ${coding} is not accepted: send the body as it is`, [{ path: ["headers", "Content-Encoding"], message: "expected none (identity)" }]);
    }
    if (route.body?.kind === "json") {
      call.body = validate(route.body.schema, await readJsonBody(call.req, route.body.maxBytes), "body");
    }
  },
});
