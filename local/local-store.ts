import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { config } from '../shared/config';
import { ensureTableAt } from '../shared/store/ensure-table';
import { startDynamoDbLocal } from './dynamodb-local';

export interface LocalStore {
  endpoint: string;
  /** What serves it, for the start-up banner. */
  description: string;
  close(): Promise<void>;
}

const dataDir = () => (config.dataDir === ':memory:' ? undefined : config.dataDir);
const runFile = () => (dataDir() ? join(dataDir()!, 'server.json') : undefined);

function runningServer(): { pid: number; endpoint: string } | undefined {
  const file = runFile();
  if (!file || !existsSync(file)) return undefined;
  const run = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; endpoint: string };
  try {
    process.kill(run.pid, 0);
    return run;
  } catch {
    return undefined; // left behind by a server that did not stop cleanly
  }
}

/**
 * Opens local mode's DynamoDB: DYNAMODB_ENDPOINT when set; else, for a tool such as
 * the keys command, the DynamoDB Local of a running `npm start` on the same DATA_DIR; else a
 * DynamoDB Local of its own. Two DynamoDB Locals must never share one data directory.
 */
export async function openLocalStore(role: 'server' | 'tool'): Promise<LocalStore> {
  let store: LocalStore;
  const running = runningServer();
  if (config.dynamodbEndpoint) {
    store = { endpoint: config.dynamodbEndpoint, description: 'DYNAMODB_ENDPOINT', close: async () => {} };
  } else if (running && role === 'tool') {
    store = { endpoint: running.endpoint, description: `the running server (pid ${running.pid})`, close: async () => {} };
  } else if (running) {
    throw new Error(`Another Cairn server (pid ${running.pid}) is using DATA_DIR=${config.dataDir}; stop it or pick another DATA_DIR`);
  } else {
    const dynamo = await startDynamoDbLocal({ dataDir: dataDir() });
    const file = role === 'server' ? runFile() : undefined;
    if (file) writeFileSync(file, JSON.stringify({ pid: process.pid, endpoint: dynamo.endpoint }));
    store = {
      endpoint: dynamo.endpoint,
      description: `DynamoDB Local, ${dataDir() ? `data in ${dataDir()}` : 'in memory'}`,
      close: async () => {
        if (file) rmSync(file, { force: true });
        await dynamo.stop();
      },
    };
  }
  try {
    await ensureTableAt(store.endpoint, config.tableName);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
