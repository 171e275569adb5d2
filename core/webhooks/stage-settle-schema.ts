import * as z from "zod";
import { stageOrder, type Stage } from "../records/stages";

/** The body of a stage-settle webhook as `webhookBody` writes it, for the OpenAPI description's `webhooks`. */
export const stageSettleEventSchema = z
  .object({
    postId: z.string(),
    originAppId: z.string().meta({ description: "The tenant's app id." }),
    stage: z.enum(stageOrder as [Stage, ...Stage[]]),
    status: z.enum(["ready", "failed", "skipped"]).meta({ description: "`pending` never fires." }),
    occurredAt: z.string().meta({ description: "ISO 8601 UTC settle time: for each (postId, stage) the latest wins." }),
  })
  .meta({
    id: "StageSettleEvent",
    description: "A stage settled. The artifact is not included: fetch the post, whose `processing` state is authoritative.",
  });
