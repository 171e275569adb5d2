import { validationError } from "../domain-error";
import type { Page } from "./post-store";
import type { Projection } from "./post-view";
import { toPostView } from "./post-view";
import { waveformOverview } from "./waveform-overview";

/**
 * A list page as the viewer sees it, each waveform as its overview; a cursor that does not belong to the list is a
 * 400.
 */
export const pageView = (page: Page, projection: Projection) => {
  if (!page.cursorValid) throw validationError("cursor does not belong to this list", [{ path: ["query", "cursor"], message: "unknown cursor" }]);
  const items = page.items.map((row) => toPostView(row.waveform ? { ...row, waveform: waveformOverview(row.waveform) } : row, projection));
  return { items, nextCursor: page.nextCursor };
};
