import type { z } from 'zod';
import { agentInput, createAgent, deleteAgent, patchAgent, presentAgent, storedAgent } from '../agents';
import { isPlainObject } from '../json-objects';
import { workflowInput, createWorkflow, presentWorkflow, removeWorkflow, replaceWorkflow, showWebhook, storedWebhook, storedWorkflow, workflows } from '../workflows';
import { NotFoundError, ValidationError } from '../errors';
import { parseInput } from '../validation';
import { ID_PREFIXES, SESSION_ID, type IdKind } from '../ids';
import { memoryOwner, type MemoryItem } from '../store/memory-graph';
import type { Runtime } from '../runtime';
import { unpackExecutionItem } from '../store/executions';
import { rowLocations } from '../store/row-locations';
import type { TenantScope } from '../tenancy';
import type { FieldInfo } from './conditions';
import { putAppRecord, updateAppRecord } from './app-records';

export const OPERATIONS = ['get', 'query', 'put', 'update', 'delete', 'count'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface FieldDef extends FieldInfo {
  description: string;
  /** May be set by put/update. */
  writable?: boolean;
  /** Shape a key value must have (a value of another shape cannot name a row of this tenant). */
  pattern?: RegExp;
}

export type Row = Record<string, unknown>;
/** Reads a field's value from the request (key, or `where` equality). */
export type Lookup = (field: string) => unknown;

export interface TableDef {
  description: string;
  fields: Record<string, FieldDef>;
  /** Fields that together identify one row (`key` of get/update/delete). */
  key: string[];
  /** A key field that another may stand in for (memory of an anonymous session: sessionId for userId). */
  keyAlternatives?: Record<string, string>;
  /** Which equalities a query or count needs, in words. */
  partition: string;
  operations: Operation[];
  /** The DynamoDB partition (and sort-key prefix) the request's values select, inside `scope`. */
  locate(scope: TenantScope, value: Lookup): { pk: string; skPrefix?: string };
  sortKey(value: Lookup, scope: TenantScope): string;
  toRow(item: Record<string, unknown>): Row | undefined;
  /** Fields outside the fixed list (records' `data.<name>`). */
  dynamicField?(name: string): FieldInfo | undefined;
  put?(rt: Runtime, scope: TenantScope, item: Row): Promise<Row>;
  update?(rt: Runtime, scope: TenantScope, value: Lookup, changes: Row): Promise<Row | undefined>;
  remove?(rt: Runtime, scope: TenantScope, value: Lookup): Promise<number>;
  /** Bulk delete by equality on these fields (e.g. forget a user). */
  removeWhere?: { fields: string[]; run(rt: Runtime, scope: TenantScope, value: Lookup): Promise<number> };
}

const str = (description: string, extra: Partial<FieldDef> = {}): FieldDef => ({ type: 'string', description, ...extra });
const num = (description: string, extra: Partial<FieldDef> = {}): FieldDef => ({ type: 'number', description, ...extra });
const nullableStr = (description: string): FieldDef => ({ type: 'string', nullable: true, description });
const READ_ONLY: Operation[] = ['get', 'query', 'count'];
const idOf = (kind: IdKind) => new RegExp(`^${ID_PREFIXES[kind]}[0-9a-z]{26}$`);
const COLLECTION = /^[A-Za-z0-9_-]{1,64}$/;
const RECORD_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const DATA_FIELD = /^data\.[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A value that selects the partition: a query must pin it with an equality. */
function text(v: Lookup, field: string): string {
  const value = v(field);
  if (typeof value !== 'string') throw new ValidationError(`where.${field}`, 'is required as an equality: it selects the partition this table is read from');
  return value;
}
const stripKeys = ({ pk: _pk, sk: _sk, expiresAt: _e, ...rest }: Record<string, unknown>) => rest;

/** Turns a domain zod failure into a 400 naming `item.<field>`. */
function parseItem<T>(schema: z.ZodType<T>, item: Row): T {
  return parseInput(schema, item, 'item');
}

async function orUndefined<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

const timestamps = {
  createdAt: str('ISO-8601 creation time'),
  updatedAt: str('ISO-8601 time of the last change'),
  version: num('Increments on every change'),
};

const agentsTable: TableDef = {
  description: 'The tenant’s agents (the same records as /v1/agents and /platform/agent).',
  fields: {
    id: str('Agent id (agt_…)', { pattern: idOf('agent') }),
    name: str('Name', { writable: true }),
    description: str('Description', { writable: true }),
    model: str('`provider/model` or a bare name', { writable: true }),
    temperature: num('0–2', { writable: true }),
    maxTokens: num('1–200000', { writable: true }),
    capabilities: { type: 'array', description: 'chat, document-search', writable: true },
    instructions: { type: 'string', nullable: true, description: 'System prompt', writable: true },
    knowledgeSourceIds: { type: 'array', description: 'Knowledge sources (ks_…)', writable: true },
    ...timestamps,
  },
  key: ['id'],
  partition: 'none: a query reads all of the tenant’s agents',
  operations: [...OPERATIONS],
  locate: (scope) => rowLocations.records(scope, 'AGENT'),
  sortKey: (v) => text(v, 'id'),
  // As /v1/agents shows an agent: its tools' sealed secrets only as `configured`.
  toRow: (item) => {
    const agent = storedAgent.safeParse(item);
    return agent.success ? presentAgent(agent.data) : undefined;
  },
  put: async (rt, scope, item) => (await createAgent(rt, scope, parseItem(agentInput, item))).record,
  update: (rt, scope, v, changes) => orUndefined(patchAgent(rt, scope, text(v, 'id'), changes)),
  remove: async (rt, scope, v) => ((await orUndefined(deleteAgent(rt, scope, text(v, 'id')))) ? 1 : 0),
};

const workflowDefinitionsTable: TableDef = {
  description: 'Workflow definitions (the same records as /v1/workflows); put and update compile them.',
  fields: {
    id: str('Workflow id (wf_…)', { pattern: idOf('workflow') }),
    name: str('Name', { writable: true }),
    description: str('Description', { writable: true }),
    steps: { type: 'array', description: 'Steps (see WorkflowInput)', writable: true },
    ...timestamps,
  },
  key: ['id'],
  partition: 'none: a query reads all of the tenant’s workflows',
  operations: [...OPERATIONS],
  locate: (scope) => rowLocations.records(scope, 'WORKFLOW'),
  sortKey: (v) => text(v, 'id'),
  // As /v1/workflows shows a workflow: sealed secrets of its steps and webhook only as `configured`.
  toRow: (item) => {
    const workflow = storedWorkflow.safeParse(item);
    return workflow.success ? presentWorkflow(workflow.data) : undefined;
  },
  put: async (rt, scope, item) => (await createWorkflow(rt, scope, parseItem(workflowInput, item))).record,
  update: async (rt, scope, v, changes) => {
    const current = await orUndefined(workflows.get(rt, scope, text(v, 'id')));
    if (!current) return undefined;
    // As responses show it: a sealed secret goes back as `configured`, which keeps it.
    const merged = { name: current.name, description: current.description, steps: presentWorkflow(current).steps, ...changes };
    return replaceWorkflow(rt, scope, current.id, parseItem(workflowInput, merged));
  },
  remove: async (rt, scope, v) => ((await orUndefined(removeWorkflow(rt, scope, text(v, 'id')))) ? 1 : 0),
};

const knowledgeCollectionsTable: TableDef = {
  description: 'Knowledge sources as collections (read-only here; change them through /v1/knowledge-sources).',
  fields: {
    id: str('Knowledge source id (ks_…)', { pattern: idOf('knowledgeSource') }),
    name: str('Name'),
    description: str('Description'),
    type: str('postgresql | file-collection'),
    status: str('created | pending | syncing | indexing | ready | failed'),
    documents: num('Documents indexed'),
    chunks: num('Chunks indexed'),
    createdAt: str('ISO-8601 creation time'),
    updatedAt: str('ISO-8601 time of the last change'),
  },
  key: ['id'],
  partition: 'none: a query reads all of the tenant’s collections',
  operations: READ_ONLY,
  locate: (scope) => rowLocations.records(scope, 'KS'),
  sortKey: (v) => text(v, 'id'),
  toRow: (item) => {
    const stats = isPlainObject(item.stats) ? item.stats : {};
    return { id: item.id, name: item.name, description: item.description, type: item.type, status: item.status, documents: stats.documents ?? 0, chunks: stats.chunks ?? 0, createdAt: item.createdAt, updatedAt: item.updatedAt };
  },
};

const documentsTable: TableDef = {
  description: 'Documents indexed from a knowledge source (a file path or a row key each).',
  fields: {
    knowledgeSourceId: str('The source (ks_…)', { pattern: idOf('knowledgeSource') }),
    documentKey: str('File path or row key', { pattern: /^[^\u0000]{1,1024}$/ }),
    documentId: str('Document id (doc_…)'),
    chunks: num('Chunks of the document'),
  },
  key: ['knowledgeSourceId', 'documentKey'],
  partition: 'knowledgeSourceId (equality)',
  operations: READ_ONLY,
  locate: (scope, v) => rowLocations.documents(scope, text(v, 'knowledgeSourceId')),
  sortKey: (v) => text(v, 'documentKey'),
  toRow: (item) => ({ knowledgeSourceId: rowLocations.sourceOfDocument(String(item.pk)), documentKey: item.documentKey, documentId: item.documentId, chunks: Array.isArray(item.chunks) ? item.chunks.length : 0 }),
};

const sessionsTable: TableDef = {
  description: 'Conversations with the tenant’s agents; delete removes a session and its messages.',
  fields: {
    agentId: str('Agent (agt_…)', { pattern: idOf('agent') }),
    sessionId: str('Session id', { pattern: SESSION_ID }),
    userId: nullableStr('The user given in converse context, if any'),
    messages: num('Messages stored'),
    createdAt: str('First turn'),
    lastMessageAt: str('Latest turn'),
  },
  key: ['agentId', 'sessionId'],
  partition: 'none (agentId equality narrows the read)',
  operations: ['get', 'query', 'count', 'delete'],
  locate: (scope, v) => {
    const agentId = v('agentId');
    return rowLocations.sessions(scope, typeof agentId === 'string' ? agentId : undefined);
  },
  sortKey: (v, scope) => rowLocations.sessionSortKey(scope, text(v, 'agentId'), text(v, 'sessionId')),
  toRow: (item) => ({ agentId: item.agentId, sessionId: item.sessionId, userId: item.userId ?? null, messages: item.messages ?? 0, createdAt: item.createdAt, lastMessageAt: item.lastMessageAt }),
  remove: async (rt, scope, v) => rt.store.sessions.deleteSession(scope, text(v, 'agentId'), text(v, 'sessionId')),
};

const messagesTable: TableDef = {
  description: 'The turns of one session, oldest first.',
  fields: {
    agentId: str('Agent (agt_…)', { pattern: idOf('agent') }),
    sessionId: str('Session id', { pattern: SESSION_ID }),
    id: str('Message id (msg_…)', { pattern: /^msg_[0-9a-z]{26}$/ }),
    role: str('user | assistant'),
    content: str('The text'),
    model: nullableStr('Assistant turns: the model that answered'),
    createdAt: str('ISO-8601 time'),
  },
  key: ['agentId', 'sessionId', 'id'],
  partition: 'agentId and sessionId (equality)',
  operations: READ_ONLY,
  locate: (scope, v) => rowLocations.messages(scope, text(v, 'agentId'), text(v, 'sessionId')),
  sortKey: (v) => text(v, 'id'),
  toRow: (item) => {
    const { agentId, sessionId } = rowLocations.sessionOfMessage(String(item.pk));
    return { agentId, sessionId, id: item.id, role: item.role, content: item.content, model: item.model ?? null, createdAt: item.createdAt };
  },
};

/** The memory tables share their partition: a user's (or anonymous session's) graph. */
function memoryTable(kind: MemoryItem['kind'], description: string, fields: Record<string, FieldDef>, idPattern: RegExp): TableDef {
  const owner = (v: Lookup) => {
    const userId = v('userId');
    const sessionId = v('sessionId');
    if (typeof userId === 'string') return memoryOwner({ userId });
    if (typeof sessionId === 'string') return memoryOwner({ sessionId });
    throw new ValidationError('where.userId', 'is required (or sessionId, for the memory of an anonymous session)');
  };
  return {
    description,
    fields: {
      id: str('Id', { pattern: idPattern }),
      agentId: str('Agent (agt_…)', { pattern: idOf('agent') }),
      userId: { type: 'string', nullable: true, description: 'The user (null: an anonymous session’s memory)', pattern: /^[^\u0000]{1,200}$/ },
      sessionId: { type: 'string', nullable: true, description: 'Anonymous memory: its session', pattern: SESSION_ID },
      ...fields,
    },
    key: ['agentId', 'userId', 'id'],
    keyAlternatives: { userId: 'sessionId' },
    partition: 'userId (or sessionId for anonymous memory), equality; agentId narrows the read',
    operations: ['get', 'query', 'count', 'delete'],
    locate: (scope, v) => {
      const agentId = v('agentId');
      return rowLocations.memory(scope, owner(v).userKey, kind, typeof agentId === 'string' ? agentId : undefined);
    },
    sortKey: (v, scope) => rowLocations.memorySortKey(scope, owner(v).userKey, text(v, 'agentId'), kind, text(v, 'id')),
    toRow: (item) => {
      if (item.kind !== kind) return undefined;
      const { pk: _pk, sk: _sk, kind: _kind, norm: _norm, toLabel: _t, entityIds: _e, factIds: _f, ...rest } = item;
      return rest;
    },
    remove: async (rt, scope, v) => {
      const { userKey } = owner(v);
      const item = await rt.store.memoryGraph.getMemoryItem(scope, userKey, text(v, 'agentId'), kind, text(v, 'id'));
      return item ? rt.store.memoryGraph.deleteMemoryItem(scope, userKey, item) : 0;
    },
    removeWhere: {
      fields: ['userId', 'sessionId', 'agentId'],
      run: (rt, scope, v) => rt.store.memoryGraph.deleteMemoryOf(scope, owner(v).userKey, typeof v('agentId') === 'string' ? text(v, 'agentId') : undefined),
    },
  };
}

const recordsTable: TableDef = {
  description: 'Free-form application data the tenant owns, in named collections. Conditions may name `data.<field>`.',
  fields: {
    collection: str('Collection name (letters, digits, _ or -; ≤ 64)', { pattern: COLLECTION }),
    id: str('Record id (given on put, else rec_…)', { pattern: RECORD_ID }),
    data: { type: 'object', description: 'The record’s content (JSON object, ≤ 350 KB)', writable: true },
    ...timestamps,
  },
  key: ['collection', 'id'],
  partition: 'collection (equality)',
  operations: [...OPERATIONS],
  locate: (scope, v) => rowLocations.appRecords(scope, text(v, 'collection')),
  sortKey: (v) => text(v, 'id'),
  toRow: stripKeys,
  dynamicField: (name) => (DATA_FIELD.test(name) ? { type: 'any', nullable: true } : undefined),
  put: (rt, scope, item) => putAppRecord(rt, scope, item),
  update: (rt, scope, v, changes) => updateAppRecord(rt, scope, text(v, 'collection'), text(v, 'id'), changes),
  remove: async (rt, scope, v) => ((await rt.store.appRecords.deleteAppRecord(scope, text(v, 'collection'), text(v, 'id'))) ? 1 : 0),
};

const executionsTable: TableDef = {
  description: 'Executions of one workflow (read-only; start them with /v1/workflows/{id}/execute).',
  fields: {
    workflowId: str('Workflow (wf_…)', { pattern: idOf('workflow') }),
    id: str('Execution id (exe_…)', { pattern: idOf('execution') }),
    status: str('running | succeeded | failed | canceled'),
    workflowVersion: num('Definition version it ran'),
    input: str('The input'),
    parameters: { type: 'object', description: 'Parameters' },
    output: { type: 'any', nullable: true, description: 'The final output' },
    error: { type: 'object', nullable: true, description: '{code, message} when it failed' },
    steps: { type: 'object', description: 'State of each step' },
    usage: { type: 'object', description: 'Tokens used' },
    createdAt: str('Created'),
    startedAt: str('Started'),
    finishedAt: nullableStr('Finished'),
  },
  key: ['workflowId', 'id'],
  partition: 'workflowId (equality)',
  operations: READ_ONLY,
  locate: (scope, v) => rowLocations.executions(scope, text(v, 'workflowId')),
  sortKey: (v) => text(v, 'id'),
  toRow: (item) => {
    // Large outputs are stored packed (executions.ts): rows show them as the executions API does.
    const { pk: _pk, sk: _sk, definition: _d, expiresAt: _e, keyId: _k, webhook, ...rest } = unpackExecutionItem(item);
    // Its webhook's secret is shown only as set, as the executions API shows it.
    const stored = storedWebhook.safeParse(webhook);
    const shown = stored.success ? { webhook: showWebhook(stored.data) } : {};
    return { finishedAt: null, error: null, output: null, ...rest, ...shown };
  },
};

const memoryTime = {
  createdAt: str('When Cairn first recorded it'),
};

/** The allow-list: nothing outside it can be named in a db/ops request. */
export const TABLES: ReadonlyMap<string, TableDef> = new Map([
  ['agents', agentsTable],
  ['knowledge_collections', knowledgeCollectionsTable],
  ['documents', documentsTable],
  ['sessions', sessionsTable],
  ['messages', messagesTable],
  [
    'memory_nodes',
    memoryTable('node', 'Entities the agent remembers about a user; delete by userId forgets the user entirely.', {
      type: str('user | person | place | organization | product | date | number | concept'),
      label: str('The entity as first mentioned'),
      mentions: num('How often it was mentioned'),
      ...memoryTime,
      lastSeenAt: str('Latest mention'),
    }, idOf('memoryNode')),
  ],
  [
    'memory_edges',
    memoryTable('edge', 'Facts (subject–relation–object) with validity (validAt/invalidAt) and record time (createdAt/expiredAt).', {
      from: str('Subject node'),
      to: str('Object node'),
      relation: str('e.g. prefers, lives_in, name'),
      fact: str('The fact in words'),
      validAt: str('When it became true'),
      invalidAt: nullableStr('When it stopped being true'),
      ...memoryTime,
      expiredAt: nullableStr('When Cairn learnt it no longer holds'),
      episodeId: str('The turn that stated it'),
      invalidatedBy: nullableStr('The fact that superseded it'),
    }, idOf('memoryEdge')),
  ],
  [
    'memory_episodes',
    memoryTable('episode', 'Converse turns as the memory recorded them.', {
      text: str('What the user said'),
      reply: str('What the agent answered'),
      at: str('When'),
    }, idOf('episode')),
  ],
  ['workflow_definitions', workflowDefinitionsTable],
  ['workflow_executions', executionsTable],
  ['records', recordsTable],
]);

