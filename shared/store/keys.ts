import type { TenantScope } from '../tenancy';

/**
 * Every key the store writes is built here. Tenant-owned keys start with the tenant scope; the
 * only global keys are look-ups that must be found before the tenant is known (API key hash).
 */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** Record collections, one partition per tenant and kind. */
export type RecordKind = 'AGENT' | 'KS' | 'WORKFLOW' | 'EVAL_DATASET' | 'EVAL_RUN';

export type MemoryKind = 'node' | 'edge' | 'episode';
const MEMORY_LETTER: Record<MemoryKind, string> = { node: 'N', edge: 'E', episode: 'P' };

const scoped = (scope: TenantScope) => `T#${scope.tenantId}#${scope.schema}`;

/** Fixed-width base-36 numbers sort as the numbers do. */
const pad = (n: number) => n.toString(36).padStart(11, '0');

/** Block items of a term sort after its directory items (base-36 segment numbers). */
export const BLOCK_PREFIX = '~';
/** A block item's sort key: impact first (best first), then segment and position. */
export const blockSortKey = (block: { impact: number; segNo: number; index: number }) =>
  `${BLOCK_PREFIX}${String(block.impact).padStart(6, '0')}${pad(block.segNo)}${block.index.toString(36).padStart(4, '0')}`;
/** The segment number in a block item's sort key. */
export const blockSegment = (sk: string) => parseInt(sk.slice(BLOCK_PREFIX.length + 6, BLOCK_PREFIX.length + 17), 36);

/** Whose budget: the tenant's, or one API key's. */
export type BudgetHolder = { tenant: true } | { keyId: string };

export const keys = {
  recordPartition: (scope: TenantScope, kind: RecordKind) => `${scoped(scope)}#${kind}`,
  record: (scope: TenantScope, kind: RecordKind, id: string): ItemKey => ({
    pk: keys.recordPartition(scope, kind),
    sk: id,
  }),

  /** A resource's releases: its versions, its aliases and their head (releases.ts). */
  releasePartition: (scope: TenantScope, kind: RecordKind, id: string) => `${scoped(scope)}#REL#${kind}#${id}`,

  filePartition: (scope: TenantScope, sourceId: string) => `${scoped(scope)}#KS#${sourceId}#FILE`,
  file: (scope: TenantScope, sourceId: string, path: string): ItemKey => ({
    pk: keys.filePartition(scope, sourceId),
    sk: path,
  }),
  /** Uploads in progress (presigned PUTs not yet completed), by upload id. */
  upload: (scope: TenantScope, sourceId: string, uploadId: string): ItemKey => ({
    pk: `${scoped(scope)}#KS#${sourceId}#UPLOAD`,
    sk: uploadId,
  }),
  /** File content is split into parts (an item holds at most 400 KB); parts belong to one version. */
  filePartPartition: (scope: TenantScope, sourceId: string) => `${scoped(scope)}#KS#${sourceId}#BLOB`,
  filePart: (scope: TenantScope, sourceId: string, versionId: string, index: number): ItemKey => ({
    pk: keys.filePartPartition(scope, sourceId),
    sk: `${versionId}#${String(index).padStart(5, '0')}`,
  }),

  /** Search index of a source: segments, postings per term and segment, chunks, documents. */
  segmentPartition: (scope: TenantScope, sourceId: string) => `${scoped(scope)}#KS#${sourceId}#SEG`,
  segment: (scope: TenantScope, sourceId: string, segNo: number): ItemKey => ({
    pk: keys.segmentPartition(scope, sourceId),
    sk: pad(segNo),
  }),
  termPartition: (scope: TenantScope, sourceId: string, term: string) => `${scoped(scope)}#KS#${sourceId}#T#${term}`,
  termSegment: (scope: TenantScope, sourceId: string, term: string, segNo: number): ItemKey => ({
    pk: keys.termPartition(scope, sourceId, term),
    sk: pad(segNo),
  }),
  /** A term's block of postings: sorted by impact first, so a Query reads the best blocks of every segment first. */
  termBlock: (scope: TenantScope, sourceId: string, term: string, block: { impact: number; segNo: number; index: number }): ItemKey => ({
    pk: keys.termPartition(scope, sourceId, term),
    sk: blockSortKey(block),
  }),
  /** A segment's field lengths per chunk (postings format 2 keeps them here, once). */
  normsPartition: (scope: TenantScope, sourceId: string) => `${scoped(scope)}#KS#${sourceId}#NORMS`,
  /** Part 0 holds the number of parts; a segment of more chunks than one item's worth has more. */
  norms: (scope: TenantScope, sourceId: string, segNo: number, part = 0): ItemKey => ({ pk: keys.normsPartition(scope, sourceId), sk: part === 0 ? pad(segNo) : `${pad(segNo)}#${part}` }),
  /** The terms a segment holds postings of, in pages: what compaction deletes with it. */
  segmentTermsPartition: (scope: TenantScope, sourceId: string, segNo: number) => `${scoped(scope)}#KS#${sourceId}#SEGT#${pad(segNo)}`,
  chunkPartition: (scope: TenantScope, sourceId: string) => `${scoped(scope)}#KS#${sourceId}#CHUNK`,
  chunk: (scope: TenantScope, sourceId: string, docNo: number): ItemKey => ({
    pk: keys.chunkPartition(scope, sourceId),
    sk: pad(docNo),
  }),
  documentPartition: (scope: TenantScope, sourceId: string) => `${scoped(scope)}#KS#${sourceId}#DOC`,
  document: (scope: TenantScope, sourceId: string, documentKey: string): ItemKey => ({
    pk: keys.documentPartition(scope, sourceId),
    sk: documentKey,
  }),
  sync: (scope: TenantScope, sourceId: string, syncId: string): ItemKey => ({
    pk: `${scoped(scope)}#KS#${sourceId}#SYNC`,
    sk: syncId,
  }),
  /** A compaction's plan: the segments it merges (as they were), the new segment numbers, its state. */
  compaction: (scope: TenantScope, sourceId: string, compactionId: string): ItemKey => ({ pk: `${scoped(scope)}#KS#${sourceId}#COMPACT`, sk: compactionId }),
  segmentCounter: (scope: TenantScope, sourceId: string): ItemKey => ({ pk: `${scoped(scope)}#KS#${sourceId}#SEQ`, sk: 'SEQ' }),
  /** The source's sealed credentials (never returned by the API). */
  sourceSecret: (scope: TenantScope, sourceId: string): ItemKey => ({ pk: `${scoped(scope)}#KS#${sourceId}#SECRET`, sk: 'SECRET' }),

  /** A conversation: its messages, oldest first by their time-ordered ids. */
  sessionPartition: (scope: TenantScope, agentId: string, sessionId: string) => `${scoped(scope)}#SESSION#${agentId}#${sessionId}`,
  /** A conversation's turn paused for a person to approve tool calls (at most one). */
  pausedTurn: (scope: TenantScope, agentId: string, sessionId: string): ItemKey => ({ pk: `${scoped(scope)}#PAUSED#${agentId}#${sessionId}`, sk: 'TURN' }),
  /** A conversation's summary of its older turns, which later turns are given in their place (at most one). */
  sessionCompaction: (scope: TenantScope, agentId: string, sessionId: string): ItemKey => ({ pk: `${scoped(scope)}#COMPACTED#${agentId}#${sessionId}`, sk: 'SUMMARY' }),

  /**
   * The memory graph of one user (or of one anonymous session): nodes, edges and episodes of
   * every agent, sort keys `<agentId>#N|E|P#<id>`, so one Query reads an agent's graph for the user
   * and one partition holds everything a "forget this user" must delete.
   */
  memoryPartition: (scope: TenantScope, userKey: string) => `${scoped(scope)}#MEM#${userKey}`,
  memoryItem: (scope: TenantScope, userKey: string, agentId: string, kind: MemoryKind, id: string): ItemKey => ({
    pk: keys.memoryPartition(scope, userKey),
    sk: `${keys.memoryPrefix(agentId, kind)}${id}`,
  }),
  /** The source id of any partition of a source's items (`…#KS#<sourceId>#…`). */
  parseSourcePartition: (pk: string): string | undefined => /#KS#([^#]+)#/.exec(pk)?.[1],
  /** Agent and session of a conversation's partition. */
  parseSessionPartition: (pk: string): { agentId: string; sessionId: string } => {
    const [agentId = '', sessionId = ''] = pk.slice(pk.indexOf('#SESSION#') + '#SESSION#'.length).split('#');
    return { agentId, sessionId };
  },
  /** The sort-key prefix of an agent's memory items (of one kind, when given) in a user's partition. */
  memoryPrefix: (agentId: string, kind?: MemoryKind) => (kind ? `${agentId}#${MEMORY_LETTER[kind]}#` : `${agentId}#`),
  /** Which users (or sessions) an agent has memories of. */
  memoryIndexPartition: (scope: TenantScope, agentId: string) => `${scoped(scope)}#MEMIDX#${agentId}`,
  memoryIndex: (scope: TenantScope, agentId: string, userKey: string): ItemKey => ({
    pk: keys.memoryIndexPartition(scope, agentId),
    sk: userKey,
  }),

  /** `records`: free-form application data, one partition per collection the tenant names. */
  appRecordPartition: (scope: TenantScope, collection: string) => `${scoped(scope)}#REC#${collection}`,
  appRecord: (scope: TenantScope, collection: string, id: string): ItemKey => ({ pk: keys.appRecordPartition(scope, collection), sk: id }),

  /** Every conversation of the tenant, one item each: what the `sessions` table lists. */
  sessionIndexPartition: (scope: TenantScope) => `${scoped(scope)}#SESSIONS`,
  sessionIndex: (scope: TenantScope, agentId: string, sessionId: string): ItemKey => ({
    pk: keys.sessionIndexPartition(scope),
    sk: `${agentId}#${sessionId}`,
  }),

  sessionIndexPrefix: (agentId: string) => `${agentId}#`,

  executionPartition: (scope: TenantScope, workflowId: string) => `${scoped(scope)}#EXEC#${workflowId}`,
  execution: (scope: TenantScope, workflowId: string, executionId: string): ItemKey => ({
    pk: keys.executionPartition(scope, workflowId),
    sk: executionId,
  }),

  /** An agent's background runs, by id (time-ordered); each run's events by number. */
  runPartition: (scope: TenantScope, agentId: string) => `${scoped(scope)}#RUNS#${agentId}`,
  run: (scope: TenantScope, agentId: string, runId: string): ItemKey => ({ pk: keys.runPartition(scope, agentId), sk: runId }),
  runEventPartition: (scope: TenantScope, runId: string) => `${scoped(scope)}#RUN#${runId}#EVENTS`,
  runEvent: (scope: TenantScope, runId: string, seq: number): ItemKey => ({ pk: keys.runEventPartition(scope, runId), sk: pad(seq) }),

  /** A `map` step's items: one each, by position. */
  mapItemPartition: (scope: TenantScope, executionId: string, stepId: string) => `${scoped(scope)}#MAP#${executionId}#${stepId}`,
  mapItem: (scope: TenantScope, executionId: string, stepId: string, index: number): ItemKey => ({
    pk: keys.mapItemPartition(scope, executionId, stepId),
    sk: String(index).padStart(5, '0'),
  }),
  /** Completion webhook deliveries of an execution, one item per event. */
  webhookDeliveryPartition: (scope: TenantScope, executionId: string) => `${scoped(scope)}#DELIVERY#${executionId}`,
  webhookDelivery: (scope: TenantScope, executionId: string, key: string): ItemKey => ({ pk: keys.webhookDeliveryPartition(scope, executionId), sk: key }),
  /** The tenant's executions waiting for a person, across workflows (pointers; the execution is the truth). */
  waitingPartition: (scope: TenantScope) => `${scoped(scope)}#WAITING`,
  waitingExecution: (scope: TenantScope, executionId: string): ItemKey => ({ pk: keys.waitingPartition(scope), sk: executionId }),

  tenant: (scope: TenantScope): ItemKey => ({ pk: `${scoped(scope)}#TENANT`, sk: 'TENANT' }),
  tenantApiKey: (scope: TenantScope, keyId: string): ItemKey => ({
    pk: `${scoped(scope)}#APIKEY`,
    sk: keyId,
  }),
  /** Global: an agent published over A2A, found by its id before the tenant is known (an agent card is read without a key). */
  publishedAgent: (agentId: string): ItemKey => ({ pk: `A2A#${agentId}`, sk: 'A2A' }),
  /** A tenant's OAuth providers and its end users' connections to them (one partition: both are few per tenant). */
  oauthPartition: (scope: TenantScope): string => `${scoped(scope)}#OAUTH`,
  oauthProvider: (scope: TenantScope, name: string): ItemKey => ({ pk: `${scoped(scope)}#OAUTH`, sk: `PROVIDER#${name}` }),
  oauthConnection: (scope: TenantScope, userId: string, provider: string): ItemKey => ({ pk: `${scoped(scope)}#OAUTH`, sk: `CONN#${userId}#${provider}` }),
  /** An authorization under way, found by its state alone (the callback carries no key): global, single-use, short-lived. */
  oauthState: (state: string): ItemKey => ({ pk: `OAUTHSTATE#${state}`, sk: 'STATE' }),
  /** Global: an inbound hook, found by its id before the tenant is known (the request carries no key). */
  hook: (hookId: string): ItemKey => ({ pk: `HOOK#${hookId}`, sk: 'HOOK' }),
  /** Global: an Idempotency-Key a hook was called with (kept a day), and the execution it started. */
  hookCall: (hookId: string, key: string): ItemKey => ({ pk: `HOOKKEY#${hookId}`, sk: key }),
  /** A workflow's inbound hooks, for listing. */
  workflowHookPartition: (scope: TenantScope, workflowId: string) => `${scoped(scope)}#HOOKS#${workflowId}`,
  workflowHook: (scope: TenantScope, workflowId: string, hookId: string): ItemKey => ({ pk: keys.workflowHookPartition(scope, workflowId), sk: hookId }),
  /** Global: local mode's workflow schedules, one partition (they are few, and read together each tick). */
  schedulePartition: 'SCHEDULES',
  schedule: (tenantId: string, workflowId: string, index: number): ItemKey => ({ pk: 'SCHEDULES', sk: `${tenantId}#${workflowId}#${index}` }),
  /** Global: a scheduled time that started its workflow (kept a few days, against duplicate messages). */
  scheduleFired: (tenantId: string, workflowId: string, index: number, at: string): ItemKey => ({ pk: `FIRED#${tenantId}#${workflowId}`, sk: `${index}#${at}` }),
  /** Global: a revoked platform access token, found by the token id its payload carries. */
  revokedToken: (tokenId: string): ItemKey => ({ pk: `TOKEN#${tokenId}`, sk: 'REVOKED' }),
  /** Global: resolves a presented key to its tenant before any scope is known. */
  apiKeyByHash: (hash: string): ItemKey => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),

  /**
   * Global: local mode's stored work queues (`namespace` keeps runs that share a table apart);
   * sort keys `<visibleAt>#<messageId>`, so the visible messages are one key-range read.
   */
  queuePartition: (namespace: string, queue: string) => `QUEUE#${namespace}#${queue}`,
  queueMessage: (namespace: string, queue: string, visibleAt: number, messageId: string): ItemKey => ({
    pk: keys.queuePartition(namespace, queue),
    sk: `${pad(visibleAt)}#${messageId}`,
  }),
  queueVisibleBefore: (at: number) => pad(at),
  queueVisibleAt: (sk: string) => parseInt(sk.slice(0, sk.indexOf('#')), 36),
  deadLetterPartition: (namespace: string, queue: string) => `QUEUE#${namespace}#${queue}#DEAD`,
  deadLetter: (namespace: string, queue: string, messageId: string): ItemKey => ({ pk: keys.deadLetterPartition(namespace, queue), sk: messageId }),

  /**
   * Global: executions and syncs in progress, for the sweeper (a few partitions so writes spread);
   * one item per execution or per source.
   */
  unfinishedPartitions: ['WORK#0', 'WORK#1', 'WORK#2', 'WORK#3'] as const,
  unfinished: (tenantId: string, kind: 'execution' | 'sync' | 'run', id: string): ItemKey => ({
    pk: `WORK#${[...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 0) % 4}`,
    sk: `${kind}#${tenantId}#${id}`,
  }),

  /** One item per key, area and clock hour holds the hour's count and each minute's count. */
  /** Usage counters of a tenant: one partition per month, an item per day × key × subject × model. */
  usagePartition: (scope: TenantScope, month: string) => `${scoped(scope)}#USAGE#${month}`,
  usage: (scope: TenantScope, bucket: { day: string; keyId: string; subject: string; model: string; release?: string; operation?: string }): ItemKey => ({
    pk: keys.usagePartition(scope, bucket.day.slice(0, 7)),
    // An operation counted apart (memory) has a bucket of its own; buckets without one keep their keys.
    sk: `${bucket.day}#${bucket.keyId}#${bucket.subject}#${bucket.model}${bucket.release !== undefined ? `#${bucket.release}` : ''}${bucket.operation !== undefined ? `#op:${bucket.operation}` : ''}`,
  }),

  /** A tenant's token budget: its own limit, and per month the tokens spent and reserved. */
  // The tenant's month and limits keep the keys they had before API keys had budgets of their own.
  tokenBudget: (scope: TenantScope, month: string, holder: BudgetHolder): ItemKey => ({ pk: `${scoped(scope)}#BUDGET`, sk: 'keyId' in holder ? `${month}#KEY#${holder.keyId}` : month }),
  tokenBudgetLimit: (scope: TenantScope, holder: BudgetHolder): ItemKey => ({ pk: `${scoped(scope)}#BUDGET`, sk: 'keyId' in holder ? `LIMIT#KEY#${holder.keyId}` : 'LIMIT' }),
  /** A tenant's default guardrails (an agent's own extend them). */
  tenantGuardrails: (scope: TenantScope): ItemKey => ({ pk: `${scoped(scope)}#SETTINGS`, sk: 'GUARDRAILS' }),
  tenantEndUserAuth: (scope: TenantScope): ItemKey => ({ pk: `${scoped(scope)}#SETTINGS`, sk: 'END_USER_AUTH' }),

  rateWindow: (scope: TenantScope, keyId: string, area: string, hourStart: number): ItemKey => ({
    pk: `${scoped(scope)}#RATE#${keyId}#${area}`,
    sk: String(hourStart),
  }),

  /** An evaluation run's results, one a case by its position, and its progress counters. */
  evalResultPartition: (scope: TenantScope, runId: string) => `${scoped(scope)}#EVR#${runId}#RES`,
  /** An evaluation dataset's cases, in the order they were added. */
  evalCasePartition: (scope: TenantScope, datasetId: string) => `${scoped(scope)}#EDS#${datasetId}#CASE`,

  idempotency: (scope: TenantScope, kind: RecordKind, idempotencyKey: string): ItemKey => ({
    pk: `${scoped(scope)}#IDEM#${kind}`,
    sk: idempotencyKey,
  }),
};
