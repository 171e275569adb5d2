import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { route as openapi } from "./openapi";
import { route as referenceScript } from "./reference-script";

export const route = defineRoute({
  file: "reference",
  method: "GET",
  path: "/api/reference",
  summary: "Per-endpoint reference generated from the OpenAPI description",
  auth: "public",
  rateLimit: null,
  uses: [],
  status: 200,
  produces: "text/html",
});

/** The reference page: Scalar, loaded from this service rather than a CDN so it works offline. */
const page = `<!doctype html>
<html lang="en">
  <head>
    <title>Audio post service: API reference</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <div id="app"></div>
    <script src="${referenceScript.path}"></script>
    <script>
      // Offline and self-contained: no web fonts, no hosted AI agent, MCP generator, telemetry or developer toolbar.
      Scalar.createApiReference("#app", {
        url: "${openapi.path}",
        withDefaultFonts: false,
        hideClientButton: true,
        agent: { disabled: true },
        mcp: { disabled: true },
        telemetry: false,
        showDeveloperTools: "never",
        showToolbar: "never",
      });
    </script>
  </body>
</html>
`;

const impl = implement(route, async () => ({
  raw: { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" }, body: page },
}));

export default impl;
export const handler = lambda(impl, {});
