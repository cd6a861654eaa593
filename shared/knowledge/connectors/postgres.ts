import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { PostgresConfig } from '../source-schema';
import { AppError, UpstreamError, ValidationError } from '../../errors';
import { resolveAllowed, type OutboundPolicy } from '../../net/outbound';
import { isIP } from 'node:net';
import type { Block } from '../../search/extract';
import { textOf } from '../../json-objects';
import { loadOnce } from '../../load-once';
import { log } from '../../log';
import type { AccessList } from '../../store/segment-access';
import { accessFromEntries, hashWithAccess } from '../access-lists';

/** The driver (with its protocol, pool and types), loaded with the first connection: most sources are not PostgreSQL. */
const driver = loadOnce(async () => (await import('pg')).default);

/**
 * Reads a PostgreSQL table as documents: one row, one document. Read-only transactions with a
 * statement timeout, keyset pagination over the id column, identifiers validated and quoted,
 * values always parameterised.
 */
export interface PgCredentials {
  username: string;
  password: string;
}

export interface TableShape {
  schema: string;
  table: string;
  idColumn: string;
  textColumns: string[];
  metadataColumns: string[];
  updatedAtColumn?: string;
  titleColumn?: string;
  accessColumn?: string;
}

export interface RowDocument {
  key: string;
  hash: string;
  title?: string;
  blocks: Block[];
  metadata: Record<string, unknown>;
  access?: AccessList;
}

export const CONNECT_TIMEOUT_MS = 5000;
const STATEMENT_TIMEOUT_MS = 60_000;
const TEXT_TYPES = new Set(['text', 'character varying', 'character', 'citext', 'name']);
const TITLE_NAMES = ['title', 'name', 'subject', 'headline', 'heading'];

/**
 * Quotes an identifier. Names reach here validated by the request schema or read back from the
 * database's own catalogue; quoting (with doubled quotes) is the second line of defence.
 */
export function quoteIdent(name: string): string {
  if (name.length === 0 || name.length > 63 || name.includes('\u0000')) throw new Error('invalid identifier');
  return `"${name.replace(/"/g, '""')}"`;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN']);

/** What went wrong, in the API's terms, without credentials or the server's own words. */
export function classifyPgError(error: unknown, config: Pick<PostgresConfig, 'host' | 'port' | 'database'>): AppError {
  const e = error as { code?: string };
  if (e.code === '28P01' || e.code === '28000') {
    return new ValidationError('credentials', 'were rejected by the database (authentication failed)');
  }
  if (e.code === '3D000') return new ValidationError('config.database', `does not exist on ${config.host}:${config.port}`);
  if (e.code === '57014') return new UpstreamError('The database cancelled a statement that took too long', { host: config.host, port: config.port }, { retryable: true });
  // Without a SQLSTATE or a network code, the failure is the client's own: its connection or query
  // timed out, or the connection ended (pg reports these as plain errors).
  if (!e.code || NETWORK_CODES.has(e.code)) {
    return new UpstreamError(
      `Cannot reach PostgreSQL at ${config.host}:${config.port}`,
      {
        host: config.host,
        port: config.port,
        // Closed and filtered ports read alike: the answer must not map a network for the caller.
        reason: e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN' ? 'host not found' : 'not reachable',
      },
      { retryable: true },
    );
  }
  return new UpstreamError('The database answered with an error', { host: config.host, port: config.port, sqlState: e.code }, { retryable: !e.code.startsWith('42') });
}

/**
 * The address of the database, through the outbound guard every tenant-given address passes (at
 * connect and at every sync: a name can change what it resolves to): a refused one is a 400 naming
 * `config.host`, before any connection is opened.
 */
async function addressOf(config: PostgresConfig, policy: OutboundPolicy): Promise<string> {
  try {
    return await resolveAllowed(config.host, config.port, policy);
  } catch (error) {
    if (error instanceof AppError && (error.details as { reason?: string } | undefined)?.reason === 'refused') throw new ValidationError('config.host', `refers to ${error.message}`);
    throw classifyPgError({ code: 'ENOTFOUND' }, config);
  }
}

export async function connect(config: PostgresConfig, credentials: PgCredentials, policy: OutboundPolicy): Promise<pg.Client> {
  const [address, { Client }] = await Promise.all([addressOf(config, policy), driver()]);
  const client = new Client({
    host: address,
    port: config.port,
    database: config.database,
    user: credentials.username,
    password: credentials.password,
    // The certificate is checked against the name given, not the address connected to.
    ssl: config.ssl ? { rejectUnauthorized: true, ...(isIP(config.host) ? {} : { servername: config.host }) } : false,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: STATEMENT_TIMEOUT_MS + 5000,
    application_name: 'cairn-ingestion',
  });
  // A dropped connection must not crash the process; the pending query fails instead.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw classifyPgError(error, config);
  }
  return client;
}

/** Runs `fn` in a READ ONLY transaction: nothing Cairn sends can change the customer's data. */
export async function readOnly<T>(client: pg.Client, fn: () => Promise<T>): Promise<T> {
  await client.query('BEGIN TRANSACTION READ ONLY');
  try {
    await client.query(`SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Resolves the table and its columns, and checks every configured column exists. */
export async function inspectTable(client: pg.Client, config: PostgresConfig): Promise<TableShape> {
  const [schemaPart, tablePart] = config.table.includes('.') ? config.table.split('.') : [undefined, config.table];
  const tables = await client.query<{ table_schema: string; table_name: string }>(
    `SELECT table_schema, table_name FROM information_schema.tables
      WHERE table_schema = coalesce($1::text, current_schema()) AND table_name IN ($2::text, lower($2::text))
      ORDER BY (table_name = $2::text) DESC LIMIT 1`,
    [schemaPart ?? null, tablePart],
  );
  const found = tables.rows[0];
  if (!found) throw new ValidationError('config.table', `${config.table} does not exist in database ${config.database} (or is not visible to this user)`);
  const columns = await client.query<{ column_name: string; data_type: string; udt_name: string }>(
    `SELECT column_name, data_type, udt_name FROM information_schema.columns
      WHERE table_schema = $1::text AND table_name = $2::text ORDER BY ordinal_position`,
    [found.table_schema, found.table_name],
  );
  const types = new Map(columns.rows.map((c) => [c.column_name, c.udt_name === 'citext' ? 'citext' : c.data_type]));
  const column = (name: string | undefined, field: string) => {
    if (name === undefined) return undefined;
    if (types.has(name)) return name;
    if (types.has(name.toLowerCase())) return name.toLowerCase();
    throw new ValidationError(field, `${name} is not a column of ${found.table_schema}.${found.table_name}`);
  };
  let idColumn = column(config.idColumn, 'config.idColumn');
  if (!idColumn) {
    const pk = await client.query<{ attname: string }>(
      `SELECT a.attname FROM pg_index i
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
        WHERE i.indrelid = $1::regclass AND i.indisprimary`,
      [`${quoteIdent(found.table_schema)}.${quoteIdent(found.table_name)}`],
    );
    if (pk.rows.length !== 1) {
      throw new ValidationError('config.idColumn', pk.rows.length === 0 ? 'is required: the table has no primary key' : 'is required: the primary key has several columns');
    }
    idColumn = pk.rows[0]!.attname;
  }
  const textColumns = config.textColumns
    ? config.textColumns.map((c, i) => column(c, `config.textColumns[${i}]`)!)
    : [...types].filter(([name, type]) => TEXT_TYPES.has(type) && name !== idColumn).map(([name]) => name);
  if (textColumns.length === 0) throw new ValidationError('config.textColumns', 'is required: the table has no text columns');
  return {
    schema: found.table_schema,
    table: found.table_name,
    idColumn,
    textColumns,
    metadataColumns: (config.metadataColumns ?? []).map((c, i) => column(c, `config.metadataColumns[${i}]`)!),
    updatedAtColumn: column(config.updatedAtColumn, 'config.updatedAtColumn'),
    titleColumn: column(config.titleColumn, 'config.titleColumn') ?? textColumns.find((c) => TITLE_NAMES.includes(c.toLowerCase())),
    accessColumn: column(config.accessColumn, 'config.accessColumn'),
  };
}

const from = (shape: TableShape) => `${quoteIdent(shape.schema)}.${quoteIdent(shape.table)}`;

/** Every row key in key order (optionally only rows changed after `since`). */
export async function listKeys(client: pg.Client, shape: TableShape, since?: string): Promise<string[]> {
  const id = quoteIdent(shape.idColumn);
  const where = since && shape.updatedAtColumn ? `WHERE ${quoteIdent(shape.updatedAtColumn)} > $1` : '';
  const result = await client.query<{ k: string }>(`SELECT ${id}::text AS k FROM ${from(shape)} ${where} ORDER BY ${id}`, where ? [since] : []);
  return result.rows.map((r) => r.k);
}

/**
 * Every row key in key order with the bytes of its text columns (optionally only rows changed
 * after `since`): what a sync sizes its segments by.
 */
export async function listKeySizes(client: pg.Client, shape: TableShape, since?: string): Promise<Array<{ key: string; bytes: number }>> {
  const id = quoteIdent(shape.idColumn);
  const where = since && shape.updatedAtColumn ? `WHERE ${quoteIdent(shape.updatedAtColumn)} > $1` : '';
  const bytes = shape.textColumns.map((c) => `coalesce(octet_length(${quoteIdent(c)}::text), 0)`).join(' + ');
  const result = await client.query<{ k: string; b: number }>(`SELECT ${id}::text AS k, (${bytes})::int AS b FROM ${from(shape)} ${where} ORDER BY ${id}`, where ? [since] : []);
  return result.rows.map((r) => ({ key: r.k, bytes: r.b }));
}

/** The column a page's last key comes back in (the id as text, as `listKeys` gives it). */
const KEY_COLUMN = 'cairn$key';

/**
 * Up to `limit` rows with keys in (after, upTo], in key order: keyset pagination on the id column.
 * `last` is the last row's key, where the next page starts.
 */
export async function readRows(
  client: pg.Client,
  shape: TableShape,
  range: { after?: string; upTo: string },
  since: string | undefined,
  limit: number,
): Promise<{ rows: Record<string, unknown>[]; last?: string }> {
  const id = quoteIdent(shape.idColumn);
  const wanted = [...new Set([shape.idColumn, ...shape.textColumns, ...shape.metadataColumns, ...(shape.titleColumn ? [shape.titleColumn] : []), ...(shape.accessColumn ? [shape.accessColumn] : [])])].map(quoteIdent).join(', ');
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (range.after !== undefined) conditions.push(`${id} > $${values.push(range.after)}`);
  conditions.push(`${id} <= $${values.push(range.upTo)}`);
  if (since && shape.updatedAtColumn) conditions.push(`${quoteIdent(shape.updatedAtColumn)} > $${values.push(since)}`);
  const result = await client.query(
    `SELECT ${wanted}, ${id}::text AS ${quoteIdent(KEY_COLUMN)} FROM ${from(shape)} WHERE ${conditions.join(' AND ')} ORDER BY ${id} LIMIT ${Math.floor(limit)}`,
    values,
  );
  const rows = result.rows as Record<string, unknown>[];
  return { rows, last: rows.length > 0 ? String(rows[rows.length - 1]![KEY_COLUMN]) : undefined };
}

function display(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return undefined;
  if (typeof value === 'object') return JSON.stringify(value);
  const text = textOf(value).trim();
  return text || undefined;
}

function jsonSafe(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (Buffer.isBuffer(value)) return undefined;
  return value;
}

/** Characters of the first text value a row without a title column is cited by. */
const ROW_TITLE_CHARS = 80;

/**
 * Whether a value means little without its column's name: a few words ("shipped", "EUR", "3"),
 * where a sentence speaks for itself. Such values are written `column: value`.
 */
const needsLabel = (text: string) => !/\p{L}/u.test(text) || text.split(/\s+/).length <= 3;

/**
 * A row as a document: each text value a block, as it reads (a short value, which needs it, after
 * its column's name); metadata columns kept as values. Its title — what its citation shows — is
 * the title column's value (`titleColumn`, else a column named title, name, subject…), else the
 * start of its first text value.
 */
export function rowToDocument(row: Record<string, unknown>, shape: TableShape): RowDocument {
  const blocks: Block[] = [];
  const labelled = shape.textColumns.filter((c) => c !== shape.titleColumn).length > 1;
  for (const column of shape.textColumns) {
    if (column === shape.titleColumn) continue;
    const text = display(row[column]);
    if (text) blocks.push({ headings: [], text: labelled && needsLabel(text) ? `${column}: ${text}` : text });
  }
  const metadata: Record<string, unknown> = {};
  for (const column of shape.metadataColumns) {
    const value = jsonSafe(row[column]);
    if (value !== undefined) metadata[column] = value;
  }
  const first = shape.textColumns.map((c) => display(row[c])).find((t) => t !== undefined);
  const title = (shape.titleColumn ? display(row[shape.titleColumn]) : undefined) ?? (first && (first.length <= ROW_TITLE_CHARS ? first : `${first.slice(0, ROW_TITLE_CHARS).replace(/\s+\S*$/, '')}…`));
  const hash = createHash('sha256').update(JSON.stringify([title, blocks, metadata])).digest('hex');
  const key = String(display(row[shape.idColumn]) ?? '');
  if (!shape.accessColumn) return { key, hash, title, blocks, metadata };
  const { access, ignored } = accessFromEntries(row[shape.accessColumn]);
  if (ignored > 0) log.warn('access entries ignored', { column: shape.accessColumn, key, ignored, expected: 'user:<id> or group:<name>' });
  return { key, hash: hashWithAccess(hash, access), title, blocks, metadata, ...(access ? { access } : {}) };
}
