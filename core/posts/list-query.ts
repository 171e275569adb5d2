import * as z from "zod";
import { isTid } from "../records/tid";
import { isActorLength, MAX_ACTOR_LENGTH } from "../tenancy/acting-actor";

const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

/** `limit` is 1 to 100 (default 20); `cursor` is the id of the last item of the previous page. */
export const pagination = {
  cursor: z.string().refine(isTid, "cursor is not a post id").optional(),
  limit: z
    .string()
    // The pattern is the range itself, so the OpenAPI document states it (a transform's bounds do not reach it).
    .regex(/^(100|[1-9][0-9]?)$/, `limit must be an integer from 1 to ${MAX_LIMIT}`)
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_LIMIT))
    .default(DEFAULT_LIMIT)
    .meta({ description: `Items per page, 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} when absent.` }),
};

export const listPostsQuerySchema = z.strictObject({
  kind: z.enum(["prompt", "reply"]).optional(),
  // An author id as the acting-actor header stores it: NFC, so either spelling of a name finds its threads, and
  // counted in characters after that, as the header is, so every stored actor can be named here.
  rootAuthor: z
    .string()
    .transform((s) => s.normalize("NFC"))
    .refine(isActorLength, `rootAuthor must be 1 to ${MAX_ACTOR_LENGTH} characters`)
    .meta({ minLength: 1, maxLength: MAX_ACTOR_LENGTH })
    .optional(),
  ...pagination,
});

export const listRepliesQuerySchema = z.strictObject({ ...pagination });

/**
 * A post id is a TID: any other path segment names no post, so it answers 404 NOT_FOUND (not a 400) without a
 * query; parse-input turns an issue marked `notFound` into that answer.
 */
export const postIdParamsSchema = z.strictObject({
  postId: z.string().refine(isTid, { message: "post not found", params: { notFound: true } }),
});
