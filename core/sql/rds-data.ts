import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  RDSDataClient,
  RollbackTransactionCommand,
  type ArrayValue,
  type ColumnMetadata,
  type ExecuteStatementCommandOutput,
  type Field,
  type SqlParameter,
} from "@aws-sdk/client-rds-data";
import { remainingMs } from "../deadline/deadline";
import { runTransaction } from "./nested-transaction";
import { parseTimestamp } from "./parse-timestamp";
import type { SqlBackend, SqlValue } from "./port";
import { withRollbackFailure } from "./rollback-failure";
import { hasMultipleStatements, sqlSegments } from "./split-statements";

export interface RdsDataOptions {
  database: string;
  resourceArn: string;
  secretArn: string;
  region?: string;
  client?: Pick<RDSDataClient, "send">;
  /** Connection and whole-request timeouts of the client this adapter builds (ignored with `client`). */
  connectMs?: number;
  requestMs?: number;
  /** Backoff for DatabaseResumingException. Defaults: 8 tries, 250 ms doubling, capped at 5 s (about 18 s in all,
   * enough for Aurora Serverless v2 to wake from 0 ACU). Never past the invocation's deadline: a retry that could not
   * finish before it is not made, and the resume error (503) is answered while there is time. */
  retry?: { tries?: number; baseMs?: number; maxMs?: number; sleep?: (ms: number) => Promise<void>; remainingMs?: () => number | undefined };
}

/** What a retry needs besides its backoff: time for the call itself and for the 503 to travel back. */
const minAttemptMs = 1_000;

/** The RDS Data API: one statement per HTTP call, `$n` placeholders sent as named `:pN` parameters. */
export const openRdsData = (opts: RdsDataOptions): SqlBackend => {
  const owned = opts.client
    ? undefined
    : new RDSDataClient({
        ...(opts.region ? { region: opts.region } : {}),
        // One attempt per call: a statement whose answer was lost (a reset, a 5xx, a timeout) may have run, and the
        // SDK's own retries would run it again. The one retry that is safe, a database still resuming, is ours.
        maxAttempts: 1,
        // Without throwOnRequestTimeout the handler only warns when requestTimeout passes and keeps waiting.
        requestHandler: { connectionTimeout: opts.connectMs, requestTimeout: opts.requestMs, throwOnRequestTimeout: true },
      });
  const client = opts.client ?? owned!;
  const tries = opts.retry?.tries ?? 8;
  const baseMs = opts.retry?.baseMs ?? 250;
  const maxMs = opts.retry?.maxMs ?? 5_000;
  const sleep = opts.retry?.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const left = opts.retry?.remainingMs ?? remainingMs;
  const target = { resourceArn: opts.resourceArn, secretArn: opts.secretArn, database: opts.database };
  const arns = { resourceArn: opts.resourceArn, secretArn: opts.secretArn };

  /** One call, sent again with backoff while `retried(error)` (a resuming database), within the invocation's time. */
  const send = async <Out>(command: object, retried: (error: unknown) => boolean = isResuming): Promise<Out> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await client.send(command as never)) as Out;
      } catch (error) {
        if (!retried(error) || attempt >= tries) throw translateError(error);
        const delay = Math.min(baseMs * 2 ** (attempt - 1), maxMs);
        const remaining = left();
        if (remaining !== undefined && remaining < delay + minAttemptMs) throw translateError(error);
        await sleep(delay);
      }
    }
  };

  /**
   * Rolls a transaction back. A statement the client gave up on (its request timeout) still runs on the server, and
   * AWS refuses any call on its transaction meanwhile ("Transaction is still running a query"): the rollback then
   * waits its turn with the same backoff, within the invocation's time. Refused for good, the transaction rolls back
   * by itself once unused for three minutes, holding its locks until then.
   */
  const rollback = (transactionId: string) =>
    send(new RollbackTransactionCommand({ ...arns, transactionId }), (error) => isResuming(error) || isTransactionBusy(error));

  const run = async <Row>(text: string, params: readonly SqlValue[] = [], transactionId?: string): Promise<Row[]> => {
    if (hasMultipleStatements(text)) throw new Error("The Data API takes one SQL statement per call");
    const out = await send<ExecuteStatementCommandOutput>(
      new ExecuteStatementCommand({
        ...target,
        sql: toNamedPlaceholders(text),
        parameters: params.map(toParameter),
        includeResultMetadata: true,
        ...(transactionId ? { transactionId } : {}),
      }),
    );
    return toRows<Row>(out.records ?? [], out.columnMetadata ?? []);
  };

  return {
    kind: "rds-data",
    query: (text, params) => run(text, params),
    async transaction(fn) {
      const { transactionId } = await send<{ transactionId?: string }>(new BeginTransactionCommand(target));
      if (!transactionId) throw new Error("Data API BeginTransaction returned no transactionId");
      // runTransaction sends the statements fn starts together one after another, and settles after the last.
      let result;
      try {
        result = await runTransaction((text, params) => run(text, params, transactionId), fn);
      } catch (error) {
        // The caller's error is the one worth seeing; a failed rollback ends anyway when the transaction times out.
        await rollback(transactionId).catch((failure: unknown) => withRollbackFailure(error, failure));
        throw error;
      }
      await send(new CommitTransactionCommand({ ...arns, transactionId }));
      return result;
    },
    async close() {
      owned?.destroy();
    },
  };
};

/** `$1` -> `:p1` in code only; literals, quoted identifiers, comments, dollar bodies and `::casts` are kept. */
export const toNamedPlaceholders = (text: string): string =>
  sqlSegments(text)
    .map((s) => (s.kind === "code" ? s.text.replace(/(^|[^A-Za-z0-9_$])\$(\d+)/g, "$1:p$2") : s.text))
    .join("");

const toParameter = (value: SqlValue | undefined, index: number): SqlParameter => {
  const name = `p${index + 1}`;
  if (value === null || value === undefined) return { name, value: { isNull: true } };
  if (typeof value === "string") return { name, value: { stringValue: value } };
  if (typeof value === "boolean") return { name, value: { booleanValue: value } };
  if (typeof value === "number") {
    return Number.isSafeInteger(value) ? { name, value: { longValue: value } } : { name, value: { doubleValue: value } };
  }
  if (value instanceof Date) return { name, value: { stringValue: toDataApiTimestamp(value) }, typeHint: "TIMESTAMP" };
  if (value instanceof Uint8Array) return { name, value: { blobValue: value } };
  throw new TypeError(`Unsupported SQL parameter $${index + 1}: ${typeof value}`);
};

/** The Data API's TIMESTAMP format, in UTC: 'YYYY-MM-DD HH:MM:SS.sss'. */
export const toDataApiTimestamp = (at: Date): string => at.toISOString().replace("T", " ").replace("Z", "");

const toRows = <Row>(records: Field[][], columns: ColumnMetadata[]): Row[] =>
  records.map((record) => {
    const row: Record<string, unknown> = {};
    record.forEach((field, i) => {
      const column = columns[i];
      row[column?.label ?? column?.name ?? `?column?${i}`] = fromField(field, column?.typeName ?? "");
    });
    return row as Row;
  });

const fromField = (field: Field, typeName: string): unknown => {
  const type = typeName.toLowerCase();
  if (field.isNull) return null;
  if (field.arrayValue) return fromArray(field.arrayValue, type.replace(/^_/, "").replace(/\[\]$/, ""));
  if (field.stringValue !== undefined) return fromString(field.stringValue, type);
  if (field.longValue !== undefined) return Number(field.longValue);
  if (field.doubleValue !== undefined) return field.doubleValue;
  if (field.booleanValue !== undefined) return field.booleanValue;
  if (field.blobValue !== undefined) return new Uint8Array(field.blobValue);
  return null;
};

const fromArray = (array: ArrayValue, elementType: string): unknown[] => {
  if (array.arrayValues) return array.arrayValues.map((inner) => (inner ? fromArray(inner, elementType) : null));
  if (array.stringValues) return array.stringValues.map((s) => (s === null ? null : fromString(s, elementType)));
  if (array.longValues) return array.longValues.map((n) => (n === null ? null : Number(n)));
  return array.doubleValues ?? array.booleanValues ?? [];
};

const NUMERIC_TYPES = new Set(["int2", "int4", "int8", "serial", "bigserial", "oid", "numeric", "decimal", "float4", "float8"]);

const fromString = (text: string, type: string): unknown => {
  if (type === "json" || type === "jsonb") return JSON.parse(text);
  if (type === "timestamptz" || type === "timestamp") return parseTimestamp(text);
  if (NUMERIC_TYPES.has(type)) return Number(text);
  if (type === "bool") return text === "t" || text === "true";
  return text;
};

const isResuming = (error: unknown): boolean => (error as { name?: string } | null)?.name === "DatabaseResumingException";

/** Serverless v2's answer to a call on a transaction whose statement still runs (data-api.differences). */
const isTransactionBusy = (error: unknown): boolean =>
  /transaction is still running a query/i.test(String((error as { message?: unknown } | null)?.message ?? ""));

const translateError = (error: unknown): unknown => {
  const message = String((error as { message?: unknown } | null)?.message ?? "");
  if (/response size limit|exceeded size limit|packet for query is too large/i.test(message)) {
    return Object.assign(
      new Error(`Data API result too large (1 MiB per response, 64 KB per row): page or narrow the query. ${message}`, {
        cause: error,
      }),
      { name: "DataApiResultTooLarge" },
    );
  }
  // Postgres errors come back as text; keep the SQLSTATE as `code`, where pg and PGlite put it.
  const sqlState = /SQLState: ?([0-9A-Z]{5})/i.exec(message)?.[1];
  if (sqlState && error && typeof error === "object" && !("code" in error && (error as { code?: unknown }).code)) {
    Object.assign(error, { code: sqlState });
  }
  return error;
};
