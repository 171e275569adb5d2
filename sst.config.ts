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
      // keepNames off: 50 KB less per bundle; nothing here reads a class or function name at run time.
      nodejs: { format: "esm", minify: true, esbuild: { keepNames: false } },
    });
    app.stack(ServiceStack, { id: "service" });
  },
} satisfies SSTConfig;
