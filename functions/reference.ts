import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

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
    <script src="${routes.referenceScript.path}"></script>
    <script>
      // Offline and self-contained: no web fonts, no hosted AI agent, MCP generator, telemetry or developer toolbar.
      Scalar.createApiReference("#app", {
        url: "${routes.openapi.path}",
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

const impl = implement(routes.reference, async () => ({
  raw: { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" }, body: page },
}));

export default impl;
export const handler = lambda(impl);
