import { posix } from "node:path";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { route as openapi } from "./openapi";
import { route as referenceScript } from "./reference-script";

export const route = defineRoute({
  file: "reference",
  method: "GET",
  path: "/api/reference",
  summary: "API reference page",
  description: "This reference, generated from the OpenAPI description and served by the service itself (no CDN).",
  auth: "public",
  rateLimit: null,
  uses: [],
  status: 200,
  produces: "text/html",
});

// Relative to the page, so it loads wherever the page was opened (behind a proxy that adds a path prefix, too).
const scriptSrc = `./${posix.relative(posix.dirname(route.path), referenceScript.path)}`;

/** The reference page: Scalar, loaded from this service rather than a CDN so it works offline. */
const page = `<!doctype html>
<html lang="en">
  <head>
    <title>Audio post service: API reference</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" href="data:," />
  </head>
  <body>
    <div id="app"></div>
    <script src="${scriptSrc}"></script>
    <script>
      // "Test Request" goes to the server that served this page, under whatever name it was opened by (127.0.0.1,
      // localhost, a proxy's name), so the browser never makes it a cross-origin call (the API sends no CORS headers).
      // The page is at <base>/api/reference, so <base> is two levels up; the description keeps the configured URL.
      const base = new URL("..", location.href).href.replace(/\\/$/, "");
      // Offline and self-contained: no web fonts, no hosted AI agent, MCP generator, telemetry or developer toolbar.
      Scalar.createApiReference("#app", {
        url: base + "${openapi.path}",
        servers: [{ url: base, description: "The server that served this page" }],
        authentication: { preferredSecurityScheme: "serviceToken" },
        withDefaultFonts: false,
        hideClientButton: true,
        agent: { disabled: true },
        mcp: { disabled: true },
        telemetry: false,
        showDeveloperTools: "never",
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
