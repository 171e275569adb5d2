/** Migration files imported as text: esbuild's `text` loader in Lambda bundles, vitest's `sqlText` plugin in tests. */
declare module "*.sql" {
  const text: string;
  export default text;
}
