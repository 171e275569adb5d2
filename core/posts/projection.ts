import { signPlaybackUrl } from "../audio/playback-url";
import { configured } from "../config/parse-config";
import type { Deps } from "../deps";
import type { ProvenTenant } from "../tenancy/tenant";
import type { Projection } from "./post-view";

/** The viewer projection of a request: its tenant, its acting actor (if any), and signed playback addresses. */
export const projectionOf = (call: { deps: Pick<Deps, "config" | "now">; tenant: ProvenTenant; actor?: string }): Projection => {
  const { config } = call.deps;
  const now = call.deps.now();
  return {
    appId: call.tenant.appId,
    did: call.tenant.did,
    actor: call.actor,
    playbackUrl: (key) => signPlaybackUrl({
        baseUrl: configured(config.publicBaseUrl, "SVC_PUBLIC_BASE_URL"),
        key,
        secret: configured(config.playbackSigningKey, "SVC_PLAYBACK_SIGNING_KEY"),
        now,
      }),
  };
};
