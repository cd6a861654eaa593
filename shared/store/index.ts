import { oauthStore } from './oauth';
import type { Clock } from '../clock';
import { config } from '../config';
import { apiKeysStore } from './api-keys';
import { batchOps, type WriteRequest } from './batch';
import { appRecordsStore } from './app-records';
import type { Db } from './db';
import { evalCasesStore } from './eval-cases';
import { evalResultsStore } from './eval-results';
import { executionsStore } from './executions';
import { filesStore } from './files';
import { hooksStore } from './hooks';
import { schedulesStore } from './schedules';
import { mapItemsStore } from './map-items';
import { memoryGraphStore } from './memory-graph';
import { partitionsStore } from './partitions';
import { pausedTurnsStore } from './paused-turns';
import { publishedAgentsStore } from './published-agents';
import { queueMessagesStore } from './queue-messages';
import { rateCountersStore } from './rate-counters';
import { recordsStore } from './records';
import { releasesStore } from './releases';
import { revokedTokensStore } from './revoked-tokens';
import { runsStore } from './runs';
import { searchIndexStore } from './search-index';
import { sessionsStore } from './sessions';
import { sourceSecretsStore } from './source-secrets';
import { syncLedgerStore } from './sync-ledger';
import { unfinishedWorkStore } from './unfinished-work';
import { tokenBudgetsStore } from './token-budgets';
import { tenantSettingsStore } from './tenant-settings';
import { usageStore } from './usage';
import { webhookDeliveriesStore } from './webhook-deliveries';

/**
 * Every stored entity over one DynamoDB handle. Built once per runtime (Lambda entry, local
 * server, test) and passed in; nothing else holds a client.
 */
export function createStore(db: Db, clock: Clock) {
  const { batchWrite } = batchOps(db);
  return {
    db,
    /**
     * Puts and deletes of any kinds in as few BatchWriteItem calls as DynamoDB allows (25 items
     * each): what a converse turn stores (its messages, the session's index, its memory) goes out
     * as one call, not one per kind. Not atomic: each item is written or retried on its own.
     */
    writeBatch: (requests: WriteRequest[]) => batchWrite(requests),
    records: recordsStore(db, clock),
    releases: releasesStore(db, clock),
    sessions: sessionsStore(db, clock),
    executions: executionsStore(db, clock),
    runs: runsStore(db, clock),
    mapItems: mapItemsStore(db, clock),
    files: filesStore(db),
    apiKeys: apiKeysStore(db, clock),
    rateCounters: rateCountersStore(db, clock),
    revokedTokens: revokedTokensStore(db, clock),
    searchIndex: searchIndexStore(db, clock, config.searchCacheBytes),
    syncLedger: syncLedgerStore(db, clock),
    memoryGraph: memoryGraphStore(db),
    appRecords: appRecordsStore(db),
    sourceSecrets: sourceSecretsStore(db),
    partitions: partitionsStore(db),
    pausedTurns: pausedTurnsStore(db, clock),
    queueMessages: queueMessagesStore(db, clock),
    unfinishedWork: unfinishedWorkStore(db),
    usage: usageStore(db),
    tokenBudgets: tokenBudgetsStore(db),
    tenantSettings: tenantSettingsStore(db),
    oauth: oauthStore(db),
    webhookDeliveries: webhookDeliveriesStore(db, clock),
    hooks: hooksStore(db, clock),
    publishedAgents: publishedAgentsStore(db),
    schedules: schedulesStore(db, clock),
    evalCases: evalCasesStore(db),
    evalResults: evalResultsStore(db),
  };
}

export type Store = ReturnType<typeof createStore>;
