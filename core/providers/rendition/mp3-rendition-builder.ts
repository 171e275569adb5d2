/**
 * Builds missing mp3 renditions through the rendition service for playback. Concurrent requests for one rendition
 * share one build; the rendition service does the same across processes, and the result is idempotent anyway.
 */
import type { RenditionBuilder } from "../rendition-builder";
import { createRenditionClient, type RenditionClient } from "./rendition-client";
import { renderedFrom } from "./rendition-answers";

/** A playback request waits at most this long: API Gateway gives up on an integration at 30 s. */
export const renderWaitMs = 25_000;

export function createMp3RenditionBuilder(client: RenditionClient): RenditionBuilder {
  const inflight = new Map<string, Promise<void>>();
  return {
    buildMp3(source) {
      const key = `${source.appId}/${source.cid}`;
      let building = inflight.get(key);
      if (!building) {
        building = client
          .call("render", source, { deadline: Date.now() + renderWaitMs })
          .then((answer) => void renderedFrom(answer))
          .finally(() => inflight.delete(key));
        inflight.set(key, building);
      }
      return building;
    },
  };
}

/** The composition roots' one line: a builder when the rendition service is configured, none otherwise. */
export const renditionsFor = (target: { url: string; token: string } | undefined, fetchImpl?: typeof fetch): { renditions?: RenditionBuilder } =>
  target ? { renditions: createMp3RenditionBuilder(createRenditionClient({ baseUrl: target.url, token: target.token, fetch: fetchImpl })) } : {};
