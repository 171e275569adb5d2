import { lambdaDeps } from "../core/runtime/lambda";
import { deadLetterHandler } from "../core/runtime/queue-handlers";

/** The dead-letter queue's consumer: jobs the queue gave up on settle their pending stages failed (dead_letter). */
export const handler = deadLetterHandler(async () => ({ pass: (await lambdaDeps()).enrichment.pass }));
