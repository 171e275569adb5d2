/** Which SQL backend DATABASE_URL names, parsed (core/config/variable-parsers.ts). */
export type DatabaseConfig =
  | { kind: "pglite"; dir: string | "memory" }
  | { kind: "postgres"; url: string }
  | { kind: "rds-data"; database: string; resourceArn: string; secretArn: string; region?: string };
