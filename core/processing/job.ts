import * as z from "zod";
import { isTid } from "../records/tid";
import { isAppId } from "../tenancy/app-id";

/** A job on the wire (queue message, task body, system route body): `{ appId, postId }`, nothing else. */
export const jobSchema = z.strictObject({
  appId: z.string().refine(isAppId, "not an appId"),
  postId: z.string().refine(isTid, "not a post id"),
});

/** A job names a post; the pass reads what is pending, so a duplicate or late job is harmless. */
export type Job = z.infer<typeof jobSchema>;

/** The job in a message body, or null when the body is not one (such a message can never succeed). */
export const parseJob = (body: string): Job | null => {
  try {
    const parsed = jobSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
};
