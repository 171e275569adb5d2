import type { SSTConfig } from "sst";
import { ServiceStack } from "./stacks/service-stack";

export default {
  config() {
    return { name: "audio-post-service", region: process.env.AWS_REGION ?? "us-east-1" };
  },
  stacks(app) {
    app.setDefaultFunctionProps({
      runtime: "nodejs22.x",
      architecture: "arm_64",
      // Minified, with the AWS SDK bundled at the version the tests ran (not the runtime's own copy).
      nodejs: { format: "esm", minify: true },
    });
    app.stack(ServiceStack, { id: "service" });
  },
} satisfies SSTConfig;
