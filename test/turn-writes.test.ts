import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { converse, converseStream } from '../shared/agents/turn';
import { episodeWrites, recordEpisode } from '../shared/memory/record-episode';
import { createStore } from '../shared/store';
import type { Db } from '../shared/store/db';
import type { MemoryItem } from '../shared/store/memory-graph';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);

/** The test's runtime with every DynamoDB call's operation noted, in order. */
function noting() {
  const operations: string[] = [];
  const { db } = testRt.store;
  const noted: Db = { ...db, client: { send: (command) => (operations.push(command.operation), db.client.send(command)) } };
  return { rt: { ...testRt, store: createStore(noted, testRt.clock) }, operations };
}
const WRITES = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;

/**
 * An owner's memory without what differs from turn to turn (ids, times), sorted, for comparing two
 * owners'. Labels in lower case: of two spellings named at once, concurrent updates keep either.
 */
const comparable = (items: MemoryItem[]) =>
  items
    .map((i) => (i.kind === 'node' ? `node ${i.type} ${i.label.toLowerCase()} ${i.mentions}` : i.kind === 'edge' ? `edge ${i.fact} ${i.invalidAt === null}` : `episode ${i.text} ${i.entityIds.length} ${i.factIds.length}`))
    .sort();

describe('what a converse turn writes', () => {
  let t: TestTenant;
  let agentId: string;
  beforeAll(async () => {
    t = await newTenant();
    agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Writer', model: 'gpt-4' } })).body.data.id;
  });
  const sessions = async () => (await call(app, 'GET', `/v1/agents/${agentId}/sessions?limit=50`, { key: t.apiKey })).body.data as Array<{ sessionId: string; messages: number; createdAt: string; lastMessageAt: string; userId?: string }>;
  const memoryOf = (userKey: string) => testRt.store.memoryGraph.memoryOf(t.scope, userKey);

  it('stores a new session’s first exchange, its index entry and its memory in one call, usage in another', async () => {
    const { rt, operations } = noting();
    const first = (await converse(rt, t.scope, agentId, { message: 'I live in Berlin and I met Anna there.', keyId: t.keyId })).data;
    // The usage update goes out while the batch is written: in either order.
    expect(operations.filter((op) => WRITES.test(op)).sort()).toEqual(['BatchWriteItem', 'UpdateItem']);
    const opened = (await sessions()).find((s) => s.sessionId === first.sessionId)!;
    expect(opened).toMatchObject({ messages: 2 });
    expect(opened.createdAt).toBe(opened.lastMessageAt);

    // The next turn of it updates what may be there: the index, the memory's nodes.
    operations.length = 0;
    await converse(rt, t.scope, agentId, { message: 'I also met Anna in Berlin today.', sessionId: first.sessionId, keyId: t.keyId });
    const writes = operations.filter((op) => WRITES.test(op));
    expect(writes.filter((op) => op === 'BatchWriteItem')).toHaveLength(1);
    expect(writes.filter((op) => op === 'UpdateItem').length).toBeGreaterThanOrEqual(3);
    const continued = (await sessions()).find((s) => s.sessionId === first.sessionId)!;
    expect(continued).toMatchObject({ messages: 4, createdAt: opened.createdAt });
    expect(continued.lastMessageAt > opened.lastMessageAt).toBe(true);

    // The memory put for the new session is what updates would have made: the same two turns in a
    // session named by the caller (never taken for new) leave the same graph.
    await converse(testRt, t.scope, agentId, { message: 'I live in Berlin and I met Anna there.', sessionId: 'named-1', keyId: t.keyId });
    await converse(testRt, t.scope, agentId, { message: 'I also met Anna in Berlin today.', sessionId: 'named-1', keyId: t.keyId });
    const put = comparable(await memoryOf(`s:${first.sessionId}`));
    expect(put).toEqual(comparable(await memoryOf('s:named-1')));
    expect(put).toEqual(expect.arrayContaining(['node user user 2', 'node place berlin 2', 'edge user lives in Berlin true']));
  });

  it('counts a node named twice in one new memory twice, as two updates would', async () => {
    const turn = (sessionId: string) => ({ agentId, sessionId, text: 'Berlin and berlin', reply: 'ok', at: new Date() });
    const extraction = { entities: [{ label: 'Berlin', type: 'place' as const }, { label: 'berlin', type: 'place' as const }], facts: [] };
    const planned = await episodeWrites(testRt, t.scope, turn('twice-new'), extraction, { newOwner: true });
    await Promise.all([testRt.store.writeBatch([...planned.puts, ...planned.episodePut]), planned.update()]);
    await recordEpisode(testRt, t.scope, turn('twice-updated'), extraction);
    const put = comparable(await memoryOf('s:twice-new'));
    expect(put).toEqual(comparable(await memoryOf('s:twice-updated')));
    expect(put).toContain('node place berlin 2');
  });

  it('does not take a streamed turn’s session for new: a turn of it started before the stream ends still counts', async () => {
    // The stream hands out its session's id before its turn ends, so another turn may use it first.
    const streamed = await converseStream(testRt, t.scope, agentId, { message: 'Hello, I live in Lisbon.', keyId: t.keyId });
    await converse(testRt, t.scope, agentId, { message: 'Are you there?', sessionId: streamed.sessionId, keyId: t.keyId });
    const deltas = streamed.deltas();
    while (!(await deltas.next()).done);
    expect((await sessions()).find((s) => s.sessionId === streamed.sessionId)).toMatchObject({ messages: 4 });
    expect(comparable(await memoryOf(`s:${streamed.sessionId}`))).toContain('node user user 2');
  });
});
