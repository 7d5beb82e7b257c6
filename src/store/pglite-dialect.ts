import { parse, protocol, type PGlite } from "@electric-sql/pglite";
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from "kysely";
import { classifyStoreError } from "./unavailable.ts";

/**
 * A small Kysely dialect for PGlite. PGlite is a single connection, so the driver hands out one
 * connection at a time (a FIFO mutex); a transaction holds it from BEGIN to COMMIT/ROLLBACK.
 * `gate` is called before every statement (tests make the store fail with it); a statement that
 * fails because the engine is closed is the store not answering (store/unavailable.ts).
 */
export class PGliteDialect implements Dialect {
  constructor(
    private readonly pglite: PGlite,
    private readonly gate?: (sql: string) => void,
  ) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.gate);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private queue: Array<() => void> = [];
  private busy = false;
  private readonly connection: PGliteConnection;

  constructor(pglite: PGlite, gate: ((sql: string) => void) | undefined) {
    this.connection = new PGliteConnection(pglite, gate);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.busy) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.busy = true;
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin"));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(): Promise<void> {
    const next = this.queue.shift();
    if (next) next();
    else this.busy = false;
  }

  async destroy(): Promise<void> {}
}

/** Prepared statements kept per connection (least recently used are closed first). */
const STATEMENT_CACHE_SIZE = 256;

interface PreparedStatement {
  name: string;
  /** Parameter type OIDs, as the server inferred them (they choose the serializer). */
  types: number[];
}

/**
 * Runs queries with parameters as named prepared statements, like node-postgres does when given a
 * statement name: PostgreSQL then parses and plans each distinct statement once instead of on every
 * call, which is most of the cost of the service's multi-step statements on the embedded engine.
 * Values are serialised and rows parsed exactly as `PGlite.query` does.
 */
class PGliteConnection implements DatabaseConnection {
  private readonly statements = new Map<string, PreparedStatement>();
  private nextName = 0;

  constructor(
    private readonly pglite: PGlite,
    private readonly gate: ((sql: string) => void) | undefined,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const parameters = compiled.parameters as unknown[];
    let result: Results<R>;
    try {
      this.gate?.(compiled.sql);
      result =
        parameters.length === 0
          ? await this.pglite.query<R>(compiled.sql)
          : await this.executePrepared<R>(compiled.sql, parameters);
    } catch (error) {
      throw classifyStoreError(error);
    }
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected === undefined ? {} : { numAffectedRows: BigInt(affected) }),
    };
  }

  private async executePrepared<R>(text: string, parameters: unknown[]): Promise<Results<R>> {
    const statement = await this.prepare(text);
    const values = parameters.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = this.pglite.serializers[statement.types[index] ?? 0];
      if (serializer) return serializer(value);
      return typeof value === "string" ? value : JSON.stringify(value);
    });
    const messages = await this.pglite.execProtocolStream(boundAndRun(statement.name, values), {
      syncToFs: false,
    });
    const [result] = parse.parseResults(messages, this.pglite.parsers) as Array<Results<R>>;
    if (!this.inTransaction(messages)) await this.pglite.syncToFs();
    return result ?? { rows: [], fields: [] };
  }

  private async prepare(text: string): Promise<PreparedStatement> {
    const cached = this.statements.get(text);
    if (cached) {
      // Most recently used last (Map keeps insertion order).
      this.statements.delete(text);
      this.statements.set(text, cached);
      return cached;
    }
    const name = `lb_${(this.nextName++).toString(36)}`;
    const { serialize } = protocol;
    const messages = await this.pglite.execProtocolStream(
      concat([serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync()]),
      { syncToFs: false },
    );
    const statement = { name, types: parse.parseDescribeStatementResults(messages) };
    this.statements.set(text, statement);
    if (this.statements.size > STATEMENT_CACHE_SIZE) await this.evictOldest();
    return statement;
  }

  private async evictOldest(): Promise<void> {
    const [text, oldest] = this.statements.entries().next().value ?? [];
    if (text === undefined || oldest === undefined) return;
    this.statements.delete(text);
    const { serialize } = protocol;
    await this.pglite.execProtocolStream(
      concat([serialize.close({ type: "S", name: oldest.name }), serialize.sync()]),
      { syncToFs: false },
    );
  }

  /** The ReadyForQuery status of the last message: 'T' or 'E' inside a transaction block. */
  private inTransaction(messages: ReadonlyArray<{ name: string }>): boolean {
    const last = messages.at(-1) as { name: string; status?: string } | undefined;
    return last?.name === "readyForQuery" && last.status !== "I";
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("Streaming is not supported on PGlite.");
  }
}

/** Describe the portal, execute it, sync: the same bytes after every Bind. */
let portalRun: Uint8Array | null = null;

/**
 * The Bind message of `statement` with `values` (text format), followed by Describe, Execute and
 * Sync, in one buffer sized in advance (decision 0035). PGlite's own `serialize.bind` measures each
 * value's UTF-8 length twice in a JavaScript loop over its characters and grows its buffer by
 * copying; a list page's settling statement binds a megabyte of text.
 */
function boundAndRun(statement: string, values: ReadonlyArray<string | null>): Uint8Array {
  if (portalRun === null) {
    const { serialize } = protocol;
    portalRun = concat([serialize.describe({ type: "P" }), serialize.execute({}), serialize.sync()]);
  }
  const lengths = values.map((value) => (value === null ? -1 : Buffer.byteLength(value, "utf8")));
  const nameLength = Buffer.byteLength(statement, "utf8");
  // Length field, "" portal, statement name, format codes, values, result format count.
  const bodyLength =
    4 +
    1 +
    nameLength +
    1 +
    2 +
    2 * values.length +
    2 +
    lengths.reduce((sum, length) => sum + 4 + Math.max(0, length), 0) +
    2;
  const out = Buffer.allocUnsafe(1 + bodyLength + portalRun.length);
  let at = out.writeUInt8(66 /* B */, 0);
  at = out.writeInt32BE(bodyLength, at);
  at = out.writeUInt8(0, at);
  at += out.write(statement, at, "utf8");
  at = out.writeUInt8(0, at);
  at = out.writeUInt16BE(values.length, at);
  for (let i = 0; i < values.length; i++) at = out.writeInt16BE(0, at);
  at = out.writeUInt16BE(values.length, at);
  values.forEach((value, i) => {
    const length = lengths[i] ?? -1;
    at = out.writeInt32BE(length, at);
    if (value !== null) at += out.write(value, at, "utf8");
  });
  at = out.writeInt16BE(0, at);
  out.set(portalRun, at);
  return out;
}

interface Results<R> {
  rows: R[];
  affectedRows?: number;
  fields: unknown[];
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
