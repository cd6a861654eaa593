import { connect, inspectTable, readOnly, type PgCredentials } from '../connectors/postgres';
import { ValidationError } from '../errors';
import type { TenantScope } from '../tenancy';
import { MAX_AGENT_SOURCES, type Agent } from './agent-schema';
import { knowledgeSources, pgConfigOf, startSync, type KnowledgeSourceRecord } from './knowledge-sources';
import { loadCredentials, storeCredentials } from './source-credentials';
import type { Runtime } from '../runtime';

export interface ConnectRequest {
  credentials?: PgCredentials;
  options: { sync: boolean; index: boolean };
  agentId?: string;
}

/** Checks the connection, the table and its columns, within the connect timeout. */
async function testPostgres(source: KnowledgeSourceRecord, credentials: PgCredentials): Promise<void> {
  const client = await connect(pgConfigOf(source), credentials);
  try {
    await readOnly(client, () => inspectTable(client, pgConfigOf(source)));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** An agent lists at most MAX_AGENT_SOURCES sources, however it gets them (a PUT checks the same). */
function assertRoomFor(agent: Agent, sourceId: string): void {
  if (!agent.knowledgeSourceIds.includes(sourceId) && agent.knowledgeSourceIds.length >= MAX_AGENT_SOURCES) {
    throw new ValidationError('agentId', `names agent ${agent.id}, which already has ${MAX_AGENT_SOURCES} knowledge sources, the most an agent may have`, {
      limit: MAX_AGENT_SOURCES,
    });
  }
}

/**
 * Adds the source to the agent, and the document-search capability with it: an agent linked to a
 * source is meant to search it. Checked again inside the conditional update, so a concurrent
 * link cannot take the agent past the limit.
 */
async function linkAgent(rt: Runtime, scope: TenantScope, agentId: string, sourceId: string): Promise<void> {
  await rt.store.records.updateRecord<Agent>(scope, 'AGENT', agentId, (agent) => {
    assertRoomFor(agent, sourceId);
    const capabilities = agent.capabilities.includes('document-search') ? agent.capabilities : [...agent.capabilities, 'document-search' as const];
    const knowledgeSourceIds = agent.knowledgeSourceIds.includes(sourceId) ? agent.knowledgeSourceIds : [...agent.knowledgeSourceIds, sourceId];
    return { ...agent, capabilities, knowledgeSourceIds };
  });
}

/**
 * Connects a source: for PostgreSQL, tests the credentials and the table first and stores the
 * credentials sealed; links the agent if one is named; then queues ingestion unless told not to.
 */
export async function connectSource(
  rt: Runtime,
  scope: TenantScope,
  id: string,
  request: ConnectRequest,
): Promise<{ source: KnowledgeSourceRecord; queued: boolean }> {
  let source = await knowledgeSources.get(rt, scope, id);
  if (request.agentId) {
    const agent = await rt.store.records.getRecord<Agent>(scope, 'AGENT', request.agentId);
    if (!agent) throw new ValidationError('agentId', `refers to agent ${request.agentId}, which does not exist`);
    assertRoomFor(agent, id);
  }
  // A connect during a running sync supersedes it: the old sync's messages are then ignored.
  const ingest = request.options.sync && request.options.index;
  if (source.type === 'postgresql') {
    const credentials = request.credentials ?? (await loadCredentials(rt, scope, id));
    if (!credentials) throw new ValidationError('credentials', 'are required to connect a postgresql source');
    await testPostgres(source, credentials);
    if (request.credentials) await storeCredentials(rt, scope, id, request.credentials);
  }
  if (request.agentId) await linkAgent(rt, scope, request.agentId, id);
  if (!ingest) return { source, queued: false };
  source = await startSync(rt, scope, id);
  return { source, queued: true };
}
