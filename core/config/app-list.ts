import { appIdMaxLength, isAppId } from "../tenancy/app-id";
import type { Logger } from "../observability/logger";

/** Parses the per-tenant `appId:value,appId:value` variables (SVC_APP_TOKENS, SVC_APP_DIDS, SVC_APP_WEBHOOK_URLS...). */

/** Returns why a value is unacceptable, or undefined when it is fine. The reason is logged, so it must never contain the value. */
export type AppListValidator = (value: string, appId: string) => string | undefined;


/**
 * Splits each entry on its first colon (values such as DIDs contain colons). A bad entry is dropped with an error
 * log naming the variable and the tenant (or the entry's position when no tenant can be read), never the value;
 * the other entries survive. A repeated appId keeps its first entry.
 */
export function parseAppList(
  name: string,
  value: string | undefined,
  validate: AppListValidator,
  log: Pick<Logger, "error">,
): Map<string, string> {
  const result = new Map<string, string>();
  if (!value) return result;
  const entries = value.split(",");
  entries.forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === "") return;
    const position = index + 1;
    const colon = entry.indexOf(":");
    if (colon < 0) {
      log.error(`${name}: entry ${position} dropped: expected appId:value`, { variable: name, entry: position });
      return;
    }
    const appId = entry.slice(0, colon).trim();
    const item = entry.slice(colon + 1).trim();
    if (appId === "") {
      log.error(`${name}: entry ${position} dropped: empty appId`, { variable: name, entry: position });
      return;
    }
    if (!isAppId(appId)) {
      log.error(`${name}: entry ${position} dropped: appId must be 1-${appIdMaxLength} letters, digits, '-', '_' or single dots`, {
        variable: name,
        entry: position,
      });
      return;
    }
    if (item === "") {
      log.error(`${name}: entry for tenant "${appId}" dropped: empty value`, { variable: name, appId });
      return;
    }
    if (result.has(appId)) {
      log.error(`${name}: duplicate entry for tenant "${appId}" dropped; the first one is kept`, { variable: name, appId });
      return;
    }
    const problem = validate(item, appId);
    if (problem !== undefined) {
      log.error(`${name}: entry for tenant "${appId}" dropped: ${problem}`, { variable: name, appId });
      return;
    }
    result.set(appId, item);
  });
  return result;
}
