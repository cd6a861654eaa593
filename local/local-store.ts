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

interface RunRecord {
  /** The server (`npm start`) that owns the data directory. */
  pid: number;
  endpoint: string;
  /** Its DynamoDB Local, which must not outlive it. */
  dynamoPid?: number;
}

const alive = (pid: number | undefined) => {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits, checking every 100 ms, while `condition` holds, for at most `ms`. */
async function waitWhile(condition: () => boolean, ms: number): Promise<void> {
  for (let waited = 0; waited < ms && condition(); waited += 100) await new Promise((r) => setTimeout(r, 100));
}

function readRun(): RunRecord | undefined {
  const file = runFile();
  if (!file || !existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}

/** The running server on this DATA_DIR, if any. */
function runningServer(): RunRecord | undefined {
  const run = readRun();
  return run && alive(run.pid) ? run : undefined;
}

/**
 * Before a server starts on DATA_DIR: a server that is still exiting (restarted right after a
 * kill) is given a few seconds; a DynamoDB Local its killed server left behind is stopped, so two
 * never share the data. Answers the server still running, if one is.
 */
async function settlePreviousRun(): Promise<RunRecord | undefined> {
  await waitWhile(() => runningServer() !== undefined, 5000);
  const running = runningServer();
  if (running) return running;
  const stale = readRun();
  if (stale?.dynamoPid && alive(stale.dynamoPid)) {
    process.kill(stale.dynamoPid, 'SIGTERM');
    await waitWhile(() => alive(stale.dynamoPid), 5000);
    if (alive(stale.dynamoPid)) process.kill(stale.dynamoPid, 'SIGKILL');
    await waitWhile(() => alive(stale.dynamoPid), 2000);
  }
  return undefined;
}

/**
 * Opens local mode's DynamoDB: DYNAMODB_ENDPOINT when set; else, for a tool such as
 * the keys command, the DynamoDB Local of a running `npm start` on the same DATA_DIR; else a
 * DynamoDB Local of its own. Two DynamoDB Locals must never share one data directory.
 */
export async function openLocalStore(role: 'server' | 'tool'): Promise<LocalStore> {
  let store: LocalStore;
  const running = role === 'server' && !config.dynamodbEndpoint ? await settlePreviousRun() : runningServer();
  if (config.dynamodbEndpoint) {
    store = { endpoint: config.dynamodbEndpoint, description: 'DYNAMODB_ENDPOINT', close: async () => {} };
  } else if (running && role === 'tool') {
    store = { endpoint: running.endpoint, description: `the running server (pid ${running.pid})`, close: async () => {} };
  } else if (running) {
    throw new Error(`Another Cairn server (pid ${running.pid}) is using DATA_DIR=${config.dataDir}; stop it or pick another DATA_DIR`);
  } else {
    const dynamo = await startDynamoDbLocal({ dataDir: dataDir() });
    const file = role === 'server' ? runFile() : undefined;
    if (file) writeFileSync(file, JSON.stringify({ pid: process.pid, endpoint: dynamo.endpoint, dynamoPid: dynamo.pid } satisfies RunRecord));
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
