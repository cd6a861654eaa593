import { connect, inspectTable, readOnly, type PgCredentials } from './connectors/postgres';
import { ValidationError } from '../errors';
import type { TenantScope } from '../tenancy';
import { knowledgeSources, pgConfigOf, startSync, type KnowledgeSourceRecord } from './sources';
import { loadCredentials, storeCredentials } from './source-credentials';
import type { Runtime } from '../runtime';

export interface ConnectRequest {
  credentials?: PgCredentials;
  options: { sync: boolean; index: boolean };
}

/** Checks the connection, the table and its columns, within the connect timeout. */
async function testPostgres(rt: Runtime, source: KnowledgeSourceRecord, credentials: PgCredentials): Promise<void> {
  const client = await connect(pgConfigOf(source), credentials, rt.outbound);
  try {
    await readOnly(client, () => inspectTable(client, pgConfigOf(source)));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * What a connect links the source to (an agent, for the connect request's `agentId`): checked
 * before anything changes, applied before the sync starts. The linked product supplies it, so
 * knowledge knows nothing of agents.
 */
export interface SourceLink {
  check(sourceId: string): Promise<void>;
  apply(sourceId: string): Promise<void>;
}

/**
 * Connects a source: for PostgreSQL, tests the credentials and the table first and stores the
 * credentials sealed; applies the link if one is given; then queues ingestion unless told not to.
 */
export async function connectSource(
  rt: Runtime,
  scope: TenantScope,
  id: string,
  request: ConnectRequest,
  link?: SourceLink,
): Promise<{ source: KnowledgeSourceRecord; queued: boolean }> {
  let source = await knowledgeSources.get(rt, scope, id);
  await link?.check(id);
  // A connect during a running sync supersedes it: the old sync's messages are then ignored.
  const ingest = request.options.sync && request.options.index;
  if (source.type === 'postgresql') {
    const credentials = request.credentials ?? (await loadCredentials(rt, scope, id));
    if (!credentials) throw new ValidationError('credentials', 'are required to connect a postgresql source');
    await testPostgres(rt, source, credentials);
    if (request.credentials) await storeCredentials(rt, scope, id, request.credentials);
  }
  await link?.apply(id);
  if (!ingest) return { source, queued: false };
  source = await startSync(rt, scope, id);
  return { source, queued: true };
}
