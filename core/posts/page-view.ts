import { validationError } from "../domain-error";
import type { Page } from "./post-store";
import type { Projection } from "./post-view";
import { toPostView } from "./post-view";

/** A list page as the viewer sees it; a cursor that does not belong to the list is a 400. */
export const pageView = (page: Page, projection: Projection) => {
  if (!page.cursorValid) throw validationError("cursor does not belong to this list", [{ path: ["query", "cursor"], message: "unknown cursor" }]);
  return { items: page.items.map((row) => toPostView(row, projection)), nextCursor: page.nextCursor };
};
