import { describe, expect, it } from "vitest";
import { remainingMs, withinDeadline } from "./deadline";

describe("the invocation deadline", () => {
  it("is told to the work inside it when published (the Data API's retries read it)", async () => {
    const left = await withinDeadline(5_000, async () => remainingMs());
    expect(left).toBeGreaterThan(4_000);
    expect(left).toBeLessThanOrEqual(5_000);
  });

  it("is still enforced but not told when unpublished (no async context where nothing reads it)", async () => {
    expect(await withinDeadline(5_000, async () => remainingMs(), { publish: false })).toBeUndefined();
    const late = withinDeadline(20, () => new Promise(() => {}), { publish: false }); // work that never ends
    await expect(late).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
  });
});
