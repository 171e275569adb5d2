/** Dependency direction, checked in CI by core/dependency-direction.test.ts (also: npx depcruise core functions). */
const adapters = [
  "^core/sql/(pglite|postgres|rds-data)\\.ts$",
  "^core/blobs/(fs-[a-z-]+|s3-blob-store)\\.ts$",
  "^core/runtime/",
  "^core/aws/",
  "^core/http/",
  "@aws-sdk/",
  "^node_modules/@aws-sdk/",
  "^node_modules/(pg|@electric-sql/pglite)/",
];
/** Domain code: what a route or a job does, behind ports. The HTTP edge, runtimes, adapters and services are not. */
const domain = "^core/(audio|posts|records|tenancy|idempotency|rate-limit|processing|webhooks|health|config|domain-error\\.ts|deps\\.ts)";

module.exports = {
  forbidden: [
    {
      name: "no-folder-cycle",
      severity: "error",
      comment: "Folders depend one way: a cycle between folders means two ideas that cannot be read apart.",
      scope: "folder",
      from: { path: "^(core|functions)/" },
      to: { circular: true },
    },
    {
      name: "no-module-cycle",
      severity: "error",
      from: { path: "^(core|functions)/" },
      to: { circular: true },
    },
    {
      name: "domain-not-adapter-or-runtime",
      severity: "error",
      comment: "Domain code sees ports only: adapters are picked in a runtime's composition root (core/runtime/).",
      from: { path: domain, pathNot: "\\.(test|bench|suite)\\.ts$|\\.test-d\\.ts$" },
      to: { path: adapters },
    },
    {
      name: "providers-from-the-composition",
      severity: "error",
      comment: "The worker pass takes its providers from what it is given: only a runtime's composition imports the registry, and with it every provider's client.",
      from: { path: "^core/", pathNot: "^core/runtime/|\\.(test|bench|suite)\\.ts$" },
      to: { path: "^core/providers/provider-registry\\.ts$" },
    },
    {
      name: "core-not-functions",
      severity: "error",
      comment: "Route files import core, never the reverse; only the Node host's entry reads the route table.",
      from: { path: "^core/", pathNot: "^core/runtime/node/load-routes\\.ts$|\\.(test|bench)\\.ts$|\\.test-d\\.ts$" },
      to: { path: "^functions/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Tests, and the entry points (npm start, npm run rendition, the route loader the Node host and the tests use):
    // nothing imports an entry, so none can sit on a cycle, but at folder scope they would tie their folder to
    // everything they compose.
    exclude: {
      path: "\\.(test|bench|suite)\\.ts$|\\.test-d\\.ts$|^core/runtime/node/(node-server|load-routes)\\.ts$|^core/rendition/rendition-main\\.ts$",
    },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".json"] },
  },
};
