import type { SSTConfig } from "sst";
import { ApiStack } from "./stacks/api-stack";

export default {
  config() {
    return { name: "audio-post-service", region: process.env.AWS_REGION ?? "us-east-1" };
  },
  stacks(app) {
    app.setDefaultFunctionProps({ runtime: "nodejs22.x", architecture: "arm_64" });
    app.stack(ApiStack);
  },
} satisfies SSTConfig;
