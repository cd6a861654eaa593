import { UpdateCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import { batchOps } from './batch';
import type { Db } from './db';
import { keys } from './keys';

/** What is counted, per day × API key × subject (agent, workflow, knowledge source) × model. */
export interface UsageCounts {
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those read from the provider's prompt cache, and those written to it. */
  cachedInputTokens: number;
  cacheWriteTokens: number;
  /** Model calls (a turn with tool rounds makes several). */
  requests: number;
  /** Model calls that failed (a 429, a 5xx, a time-out…), whether or not a fallback model then answered. */
  failedRequests: number;
  toolCalls: number;
  searches: number;
  /** DynamoDB read capacity units of the searches. */
  readUnits: number;
  /** DynamoDB write capacity units of ingestion. */
  writeUnits: number;
  /** UTF-8 bytes of the document text indexed. */
  bytesIngested: number;
  /** Workflow steps that succeeded. */
  steps: number;
  /** Replies rated up and down by people (a rating changed moves from one to the other). */
  feedbackUp: number;
  feedbackDown: number;
  /** What agents' guardrails found (personal values, denied topics, blocked words), enforced or only detected. */
  guardrailFindings: number;
  /** CPU milliseconds of tenants' code (code steps and code tools), as the sandbox measured it. */
  codeMs: number;
}

export interface UsageBucket {
  /** YYYY-MM-DD (UTC). */
  day: string;
  keyId: string;
  /** `agent:<id>`, `workflow:<id>` or `knowledge-source:<id>`. */
  subject: string;
  /** `provider/model`. */
  model: string;
  /** Which release of the subject did the work: a version number or `draft` (absent: not versioned, or counted before versions existed). */
  release?: string;
  /** Work counted apart from the subject's requests (`memory`); absent for the requests themselves. */
  operation?: string;
}

export type UsageRow = UsageBucket & UsageCounts;

export const USAGE_COUNTS: Array<keyof UsageCounts> = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheWriteTokens', 'requests', 'failedRequests', 'toolCalls', 'searches', 'readUnits', 'writeUnits', 'bytesIngested', 'steps', 'feedbackUp', 'feedbackDown', 'guardrailFindings', 'codeMs'];

/** Every count, each given by `count`. */
export const usageCounts = (count: (c: keyof UsageCounts) => number): UsageCounts => ({
  inputTokens: count('inputTokens'),
  outputTokens: count('outputTokens'),
  cachedInputTokens: count('cachedInputTokens'),
  cacheWriteTokens: count('cacheWriteTokens'),
  requests: count('requests'),
  failedRequests: count('failedRequests'),
  toolCalls: count('toolCalls'),
  searches: count('searches'),
  readUnits: count('readUnits'),
  writeUnits: count('writeUnits'),
  bytesIngested: count('bytesIngested'),
  steps: count('steps'),
  feedbackUp: count('feedbackUp'),
  feedbackDown: count('feedbackDown'),
  guardrailFindings: count('guardrailFindings'),
  codeMs: count('codeMs'),
});

export function usageStore(db: Db) {
  const { queryAll } = batchOps(db);

  /**
   * Adds to one bucket's counters in a single atomic update: concurrent turns on any instance add
   * up exactly, and the table grows by buckets, not by events. Counts left out (or 0) are not
   * touched; a counter never added to reads as 0.
   */
  async function add(scope: TenantScope, bucket: UsageBucket, counts: Partial<UsageCounts>): Promise<void> {
    const added = USAGE_COUNTS.filter((c) => (counts[c] ?? 0) !== 0);
    if (added.length === 0) return;
    await db.client.send(
      new UpdateCommand({
        TableName: db.table,
        Key: keys.usage(scope, bucket),
        UpdateExpression: `ADD ${added.map((c) => `#${c} :${c}`).join(', ')} SET #day = :day, #keyId = :keyId, #subject = :subject, #model = :model${bucket.release !== undefined ? ', #release = :release' : ''}${bucket.operation !== undefined ? ', #operation = :operation' : ''}`,
        ExpressionAttributeNames: Object.fromEntries([...added, 'day', 'keyId', 'subject', 'model', ...(bucket.release !== undefined ? ['release'] : []), ...(bucket.operation !== undefined ? ['operation'] : [])].map((n) => [`#${n}`, n])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(added.map((c) => [`:${c}`, counts[c]])),
          ':day': bucket.day,
          ':keyId': bucket.keyId,
          ':subject': bucket.subject,
          ':model': bucket.model,
          ...(bucket.release !== undefined ? { ':release': bucket.release } : {}),
          ...(bucket.operation !== undefined ? { ':operation': bucket.operation } : {}),
        },
      }),
    );
  }

  /** Every bucket from `from` to `to` (days, inclusive): one Query per month. */
  async function list(scope: TenantScope, from: string, to: string): Promise<UsageRow[]> {
    const months: string[] = [];
    for (let month = from.slice(0, 7); month <= to.slice(0, 7); ) {
      months.push(month);
      const [y, m] = month.split('-').map(Number) as [number, number];
      month = m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
    }
    const items = (await Promise.all(months.map((month) => queryAll(keys.usagePartition(scope, month))))).flat();
    return items
      .filter((item) => String(item.day) >= from && String(item.day) <= to)
      .map((item) => ({
        day: String(item.day),
        keyId: String(item.keyId),
        subject: String(item.subject),
        model: String(item.model),
        ...(typeof item.release === 'string' ? { release: item.release } : {}),
        ...(typeof item.operation === 'string' ? { operation: item.operation } : {}),
        ...usageCounts((c) => Number(item[c] ?? 0)),
      }));
  }

  return { add, list };
}

export type UsageStore = ReturnType<typeof usageStore>;
