import type { PortLoader } from "./port-loader";

/** The Lambda rendition port: the rendition service's client when SVC_RENDITION_SERVICE_URL is set, else absent. */
export const lambdaRenditions: PortLoader<"renditions"> = async (config) => {
  const { renditionsFor } = await import("../../providers/rendition/mp3-rendition-builder");
  return renditionsFor(config.rendition).renditions;
};
