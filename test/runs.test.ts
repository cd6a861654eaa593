import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { localRuntimeWith, modelsWithStandIn } from './helpers/runtime';
import { parseSse } from './helpers/sse';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Background runs against the real queue and store: an OpenAI-compatible stand-in at the wire
 * scripts as many tool rounds as the message asks for ("rounds: 30"), each a call of an http tool
 * on a local server that records what reached it, then answers. Runs outlive their request, are
 * taken a step at a time by the steps worker, and can be followed, cancelled and approved.
 */
const reached: Array<{ n: number; headers: IncomingHttpHeaders }> = [];
let toolDelayMs = 0;
const tools = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw || '{}') as { n?: number };
    reached.push({ n: body.n ?? -1, headers: req.headers });
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ recorded: body.n })), toolDelayMs);
  });
});

const provider = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string | null }>; tools?: unknown[] };
    const asked = Number(/rounds: (\d+)/.exec(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')?.[1] ?? 0);
    const done = body.messages.filter((m) => m.role === 'tool').length;
    const message =
      done < asked && body.tools?.length
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${done}`, type: 'function', function: { name: 'record', arguments: JSON.stringify({ n: done }) } }] }
        : { role: 'assistant', content: `Done after ${done} rounds.` };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: 'gpt-4o', choices: [{ index: 0, message, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } }),
    );
  });
});

let local: ReturnType<typeof localRuntimeWith>;
let t: TestTenant;
let agentId = '';
const app = () => createLocalApp(local.rt);
const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(app(), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
const recordTool = (extra: Record<string, unknown> = {}) => ({
  type: 'http',
  name: 'record',
  description: 'Records an item',
  method: 'POST',
  url: `http://localhost:${(tools.address() as AddressInfo).port}/record`,
  parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  ...extra,
});

beforeAll(async () => {
  await new Promise<void>((resolve) => tools.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  local = localRuntimeWith(modelsWithStandIn(provider));
  await local.start();
  t = await newTenant('unlimited');
  agentId = (await api('POST', '/v1/agents', { name: 'Worker', model: 'openai/gpt-4o', tools: [recordTool()] })).body.data.id as string;
});
afterAll(async () => {
  await local.stop();
  await new Promise<void>((resolve) => tools.close(() => resolve()));
  await new Promise<void>((resolve) => provider.close(() => resolve()));
});

describe('background runs', () => {
  it('runs 30 tool rounds through the queue, one step at a time, and stores the exchange in its session', async () => {
    reached.length = 0;
    const started = await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 30', maxToolSteps: 40 });
    expect(started.status).toBe(202);
    expect(started.body.data).toMatchObject({ id: expect.stringMatching(/^run_/), status: 'queued', agentId });
    expect(started.headers.get('location')).toBe(`/v1/agents/${agentId}/runs/${started.body.data.id}`);
    await local.workflowSteps!.drain();
    const run = (await api('GET', `/v1/agents/${agentId}/runs/${started.body.data.id}`)).body.data;
    expect(run).toMatchObject({ status: 'completed', reply: 'Done after 30 rounds.', step: 30, usage: { inputTokens: 31 * 50, outputTokens: 31 * 10 } });
    expect(run.steps.filter((s: { kind: string }) => s.kind === 'model')).toHaveLength(31);
    expect(run.steps.filter((s: { kind: string }) => s.kind === 'tool').map((s: { result: string }) => JSON.parse(s.result).recorded)).toEqual([...Array(30).keys()]);
    // Every call reached the tool once, each with its own Idempotency-Key.
    expect(reached.map((r) => r.n)).toEqual([...Array(30).keys()]);
    expect(new Set(reached.map((r) => r.headers['idempotency-key'])).size).toBe(30);
    // Its exchange is in its session: converse there continues it.
    const messages = (await api('GET', `/v1/agents/${agentId}/sessions/${run.sessionId}/messages`)).body.data;
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([['user', 'rounds: 30'], ['assistant', 'Done after 30 rounds.']]);
    expect(run.messageId).toBe(messages[1].id);
  });

  it('replays a finished run’s events with ids, and resumes after Last-Event-ID with nothing lost or repeated', async () => {
    const started = (await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 2' })).body.data;
    await local.workflowSteps!.drain();
    const all = parseSse(await (await app().request(`/v1/agents/${agentId}/runs/${started.id}/events`, { headers: { 'x-api-key': t.apiKey } })).text());
    expect(all.at(-1)!.event).toBe('done');
    expect(JSON.parse(all.at(-1)!.data)).toMatchObject({ status: 'completed', reply: 'Done after 2 rounds.' });
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual([...Array(ids.length).keys()].map((i) => i + 1));
    expect(all.map((e) => e.event)).toEqual(expect.arrayContaining(['status', 'step', 'delta', 'done']));
    const rest = parseSse(await (await app().request(`/v1/agents/${agentId}/runs/${started.id}/events`, { headers: { 'x-api-key': t.apiKey, 'last-event-id': String(ids[2]) } })).text());
    expect(rest.map((e) => Number(e.id))).toEqual(ids.slice(3));
    // A malformed Last-Event-ID is ignored.
    const again = parseSse(await (await app().request(`/v1/agents/${agentId}/runs/${started.id}/events`, { headers: { 'x-api-key': t.apiKey, 'last-event-id': 'nonsense' } })).text());
    expect(again).toHaveLength(all.length);
  });

  it('asks for a final answer without tools at maxToolSteps, and fails at its token budget', async () => {
    const limited = (await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 10', maxToolSteps: 3 })).body.data;
    const budgeted = (await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 10', budget: { maxTokens: 200 } })).body.data;
    await local.workflowSteps!.drain();
    expect((await api('GET', `/v1/agents/${agentId}/runs/${limited.id}`)).body.data).toMatchObject({ status: 'completed', step: 3, reply: 'Done after 3 rounds.' });
    expect((await api('GET', `/v1/agents/${agentId}/runs/${budgeted.id}`)).body.data).toMatchObject({ status: 'failed', error: { code: 'QUOTA_EXCEEDED' } });
  });

  it('waits for a person on a call that needs approval, and goes on once they decide', async () => {
    const gated = (await api('POST', '/v1/agents', { name: 'Gated', model: 'openai/gpt-4o', tools: [recordTool({ requireApproval: true })] })).body.data.id as string;
    const started = (await api('POST', `/v1/agents/${gated}/runs`, { message: 'rounds: 1' })).body.data;
    await local.workflowSteps!.drain();
    const waiting = (await api('GET', `/v1/agents/${gated}/runs/${started.id}`)).body.data;
    expect(waiting).toMatchObject({ status: 'requires_action', pendingToolCalls: [{ id: 'call_0', tool: 'record', arguments: { n: 0 } }] });
    expect((await api('POST', `/v1/agents/${gated}/runs/${started.id}/approvals`, { toolApprovals: [{ id: 'other', approved: true }] })).status).toBe(400);
    const resumed = await api('POST', `/v1/agents/${gated}/runs/${started.id}/approvals`, { toolApprovals: [{ id: 'call_0', approved: true }] });
    expect(resumed.status).toBe(200);
    await local.workflowSteps!.drain();
    expect((await api('GET', `/v1/agents/${gated}/runs/${started.id}`)).body.data).toMatchObject({ status: 'completed', reply: 'Done after 1 rounds.' });
    expect((await api('POST', `/v1/agents/${gated}/runs/${started.id}/approvals`, { toolApprovals: [{ id: 'call_0', approved: true }] })).status).toBe(409);
  });

  it('cancels: nothing starts after it, a second cancel is a 409; lists runs by status and session; refuses bad settings', async () => {
    toolDelayMs = 300;
    try {
      const started = (await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 20' })).body.data;
      await expect.poll(async () => (await api('GET', `/v1/agents/${agentId}/runs/${started.id}`)).body.data.step, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      const cancelled = await api('POST', `/v1/agents/${agentId}/runs/${started.id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.data.status).toBe('cancelled');
      await local.workflowSteps!.drain();
      const after = (await api('GET', `/v1/agents/${agentId}/runs/${started.id}`)).body.data;
      expect(after.status).toBe('cancelled');
      expect(after.step).toBeLessThan(20);
      expect((await api('POST', `/v1/agents/${agentId}/runs/${started.id}/cancel`)).status).toBe(409);
      const listed = (await api('GET', `/v1/agents/${agentId}/runs?status=cancelled`)).body.data.map((r: { id: string }) => r.id);
      expect(listed).toContain(started.id);
      expect((await api('GET', `/v1/agents/${agentId}/runs?sessionId=${started.sessionId}`)).body.data.map((r: { id: string }) => r.id)).toEqual([started.id]);
    } finally {
      toolDelayMs = 0;
    }
    for (const [body, field] of [
      [{ message: 'x', maxToolSteps: 101 }, 'maxToolSteps'],
      [{ message: 'x', maxDurationSeconds: 86_401 }, 'maxDurationSeconds'],
      [{}, 'message'],
    ] as const) {
      const refused = await api('POST', `/v1/agents/${agentId}/runs`, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe(field);
    }
    expect((await api('GET', `/v1/agents/${agentId}/runs/run_01m8nothere000000000000000`)).status).toBe(404);
    const other = await newTenant();
    expect((await call(app(), 'GET', `/v1/agents/${agentId}/runs`, { key: other.apiKey })).status).toBe(404);
  });

  it('re-runs an ended run from a model step: earlier rounds are reused, not sent again, and the exchange goes to a copy of the session', async () => {
    const first = (await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 4' })).body.data;
    await local.workflowSteps!.drain();
    const original = (await api('GET', `/v1/agents/${agentId}/runs/${first.id}`)).body.data;
    expect(original).toMatchObject({ status: 'completed', reply: 'Done after 4 rounds.' });
    reached.length = 0;
    const res = await api('POST', `/v1/agents/${agentId}/runs/${first.id}/rerun`, { fromStep: 2 });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/agents/${agentId}/runs/${res.body.data.id}`);
    expect(res.body.data).toMatchObject({ status: 'queued', rerunOf: { runId: first.id, fromStep: 2 }, step: 2 });
    await local.workflowSteps!.drain();
    const rerun = (await api('GET', `/v1/agents/${agentId}/runs/${res.body.data.id}`)).body.data;
    expect(rerun).toMatchObject({ status: 'completed', reply: 'Done after 4 rounds.', step: 4, usage: { inputTokens: 3 * 50 } });
    // Rounds 0 and 1 were not sent again; the model was asked from step 2 on.
    expect(reached.map((r) => r.n)).toEqual([2, 3]);
    const reused = rerun.steps.filter((s: { reused?: boolean }) => s.reused);
    expect(reused.map((s: { step: number; kind: string }) => `${s.kind}${s.step}`)).toEqual(['model0', 'tool0', 'model1', 'tool1']);
    expect(rerun.steps.filter((s: { reused?: boolean; kind: string }) => !s.reused && s.kind === 'model')).toHaveLength(3);
    // The original session keeps its answer; the re-run's exchange is in a session of its own.
    expect(rerun.sessionId).not.toBe(original.sessionId);
    const messages = async (session: string) => (await api('GET', `/v1/agents/${agentId}/sessions/${session}/messages`)).body.data.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);
    expect(await messages(rerun.sessionId)).toEqual(['user: rounds: 4', 'assistant: Done after 4 rounds.']);
    expect(await messages(original.sessionId)).toEqual(['user: rounds: 4', 'assistant: Done after 4 rounds.']);

    const past = await api('POST', `/v1/agents/${agentId}/runs/${first.id}/rerun`, { fromStep: 5 });
    expect(past.status).toBe(400);
    expect(past.body.error.details.field).toBe('fromStep');
    const negative = await api('POST', `/v1/agents/${agentId}/runs/${first.id}/rerun`, { fromStep: -1 });
    expect(negative.status).toBe(400);
    expect((await api('POST', `/v1/agents/${agentId}/runs/run_01jd8x2k3m4n5p6q7r8s9t0v1w/rerun`, { fromStep: 0 })).status).toBe(404);
    const gated = (await api('POST', '/v1/agents', { name: 'Gated again', model: 'openai/gpt-4o', tools: [recordTool({ requireApproval: true })] })).body.data.id as string;
    const waiting = (await api('POST', `/v1/agents/${gated}/runs`, { message: 'rounds: 1' })).body.data;
    await local.workflowSteps!.drain();
    const early = await api('POST', `/v1/agents/${gated}/runs/${waiting.id}/rerun`, { fromStep: 0 });
    expect(early.status).toBe(409);
    expect(early.body.error.details.status).toBe('requires_action');
  });

  it('runs a workflow agent step in the background: the step waits on the run, holding no worker, and settles when it ends', async () => {
    const gated = (await api('POST', '/v1/agents', { name: 'Gated step', model: 'openai/gpt-4o', tools: [recordTool({ requireApproval: true })] })).body.data.id as string;
    const wf = await api('POST', '/v1/workflows', {
      name: 'long job',
      steps: [
        { id: 'work', type: 'agent', agentId, message: 'rounds: {{parameters.rounds}}', background: true },
        { id: 'check', type: 'agent', agentId: gated, message: 'rounds: 1', background: true },
        { id: 'sum', type: 'transform', expression: '{"first": steps.work.output.reply, "second": steps.check.output.reply}' },
      ],
    });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    reached.length = 0;
    const started = await api('POST', `/v1/workflows/${wf.body.data.id}/execute`, { parameters: { rounds: 3 }, mode: 'async' });
    expect(started.status).toBe(202);
    await local.workflowSteps!.drain();
    const read = async () => (await api('GET', `/v1/workflows/${wf.body.data.id}/executions/${started.body.data.id}`)).body.data;
    const paused = await read();
    // The first run completed and settled its step; the second waits for a person's approval on its run.
    const work = paused.steps.find((s: { id: string }) => s.id === 'work');
    expect(work).toMatchObject({ status: 'succeeded', completedBy: 'run', output: { reply: 'Done after 3 rounds.', runId: work.run.runId } });
    expect(reached.map((r) => r.n)).toEqual([0, 1, 2]);
    const check = paused.steps.find((s: { id: string }) => s.id === 'check');
    expect(check).toMatchObject({ status: 'waiting', run: { agentId: gated } });
    // Waiting on a run is work in progress, not waiting for a person.
    expect(paused.status).toBe('running');
    const run = (await api('GET', `/v1/agents/${gated}/runs/${check.run.runId}`)).body.data;
    expect(run.status).toBe('requires_action');
    expect((await api('POST', `/v1/agents/${gated}/runs/${run.id}/approvals`, { toolApprovals: [{ id: 'call_0', approved: true }] })).status).toBe(200);
    await local.workflowSteps!.drain();
    const done = await read();
    expect(done).toMatchObject({ status: 'succeeded', output: { first: 'Done after 3 rounds.', second: 'Done after 1 rounds.' } });

    const inMap = await api('POST', '/v1/workflows', { name: 'bad', steps: [{ id: 'each', type: 'map', items: '[1,2]', steps: [{ id: 'a', type: 'agent', agentId, message: 'x', background: true }] }] });
    expect(inMap.status).toBe(400);
    expect(inMap.body.error.details.field).toContain('background');
  });

  it('keeps an execution waiting on a run from the sweeper’s failure, and settles the step when the run’s end was lost on the way', async () => {
    const { sweep, MAX_REDRIVES } = await import('../shared/work-sweeper');
    const gated = (await api('POST', '/v1/agents', { name: 'Gated sweep', model: 'openai/gpt-4o', tools: [recordTool({ requireApproval: true })] })).body.data.id as string;
    const wf = (await api('POST', '/v1/workflows', { name: 'waits', steps: [{ id: 'check', type: 'agent', agentId: gated, message: 'rounds: 1', background: true }] })).body.data.id as string;
    const started = (await api('POST', `/v1/workflows/${wf}/execute`, { mode: 'async' })).body.data;
    await local.workflowSteps!.drain();
    const only = { afterMs: 0, tenantId: t.scope.tenantId };
    for (let i = 0; i < MAX_REDRIVES + 2; i++) expect((await sweep(local.rt, only)).outcomes.failed).toBe(0);
    await local.workflowSteps!.drain();
    const waiting = (await api('GET', `/v1/workflows/${wf}/executions/${started.id}`)).body.data;
    expect(waiting.status).toBe('running');
    const { runId } = waiting.steps[0].run;
    // The run ends without waking the step (as if its message were lost); the sweeper's check settles it.
    const run = (await local.rt.store.runs.getRun(t.scope, gated, runId))!;
    await local.rt.store.runs.changeRun(t.scope, run, ['requires_action'], { status: 'cancelled', finishedAt: new Date().toISOString() }, []);
    await sweep(local.rt, only);
    await local.workflowSteps!.drain();
    const ended = (await api('GET', `/v1/workflows/${wf}/executions/${started.id}`)).body.data;
    expect(ended.status).toBe('failed');
    expect(ended.steps[0]).toMatchObject({ status: 'failed', completedBy: 'run' });
    expect(ended.steps[0].error.message).toContain(`run ${runId} cancelled`);
  });

  it('cancels the run a background step waits for when its execution is cancelled', async () => {
    const gated = (await api('POST', '/v1/agents', { name: 'Gated cancel', model: 'openai/gpt-4o', tools: [recordTool({ requireApproval: true })] })).body.data.id as string;
    const wf = (await api('POST', '/v1/workflows', { name: 'cancelled', steps: [{ id: 'check', type: 'agent', agentId: gated, message: 'rounds: 1', background: true }] })).body.data.id as string;
    const started = (await api('POST', `/v1/workflows/${wf}/execute`, { mode: 'async' })).body.data;
    await local.workflowSteps!.drain();
    const { runId } = (await api('GET', `/v1/workflows/${wf}/executions/${started.id}`)).body.data.steps[0].run;
    expect((await api('POST', `/v1/workflows/${wf}/executions/${started.id}/cancel`)).status).toBe(200);
    expect((await api('GET', `/v1/agents/${gated}/runs/${runId}`)).body.data.status).toBe('cancelled');
    await local.workflowSteps!.drain();
    expect((await api('GET', `/v1/workflows/${wf}/executions/${started.id}`)).body.data.status).toBe('canceled');
  });

  it('completes 50 concurrent runs of 10 rounds each, nothing lost', async () => {
    reached.length = 0;
    const started = await Promise.all(Array.from({ length: 50 }, () => api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 10' })));
    expect(started.map((s) => s.status)).toEqual(Array(50).fill(202));
    await local.workflowSteps!.drain();
    const runs = await Promise.all(started.map(async (s) => (await api('GET', `/v1/agents/${agentId}/runs/${s.body.data.id}`)).body.data));
    expect(runs.map((r) => r.status)).toEqual(Array(50).fill('completed'));
    expect(runs.every((r) => r.reply === 'Done after 10 rounds.' && r.steps.filter((s: { kind: string }) => s.kind === 'tool').length === 10)).toBe(true);
    expect(reached).toHaveLength(500);
    expect(new Set(reached.map((r) => r.headers['idempotency-key'])).size).toBe(500);
  }, 180_000);

  it('expires a run past its maxDurationSeconds with its steps so far, and posts the finished run to its webhook, signed', async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    toolDelayMs = 1500;
    try {
      const secret = 'whsec_0123456789abcdef';
      const started = (await api('POST', `/v1/agents/${agentId}/runs`, { message: 'rounds: 5', maxDurationSeconds: 1, webhook: { url: `http://localhost:${(receiver.address() as AddressInfo).port}/hook`, secret } })).body.data;
      expect(started.webhook).toEqual({ url: expect.stringContaining('/hook'), configured: true });
      expect(JSON.stringify(started)).not.toContain(secret);
      await local.workflowSteps!.drain();
      const run = (await api('GET', `/v1/agents/${agentId}/runs/${started.id}`)).body.data;
      expect(run).toMatchObject({ status: 'expired', error: { code: 'EXPIRED' } });
      expect(run.steps.length).toBeGreaterThanOrEqual(1);
      await local.webhooks!.drain();
      expect(received).toHaveLength(1);
      const posted = JSON.parse(received[0]!.body) as { event: string; run: { id: string; status: string } };
      expect(posted).toMatchObject({ event: 'run.expired', run: { id: started.id, status: 'expired' } });
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(received[0]!.headers['cairn-signature']))!;
      const { createHmac } = await import('node:crypto');
      expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${received[0]!.body}`).digest('hex'));
    } finally {
      toolDelayMs = 0;
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  }, 30_000);

  it('serves OpenAI background responses to the official client: create, retrieve, stream resumed after a sequence number, cancel', async () => {
    const client = new OpenAI({ apiKey: t.apiKey, baseURL: 'http://cairn.test/v1', maxRetries: 0, fetch: async (url: string | URL | Request, init?: RequestInit) => app().request(url instanceof Request ? url : url.toString(), init) });
    const queued = await client.responses.create({ model: agentId, input: 'rounds: 3', background: true });
    expect(queued).toMatchObject({ object: 'response', status: 'queued', background: true, output: [] });
    await local.workflowSteps!.drain();
    const done = await client.responses.retrieve(queued.id);
    expect(done).toMatchObject({ id: queued.id, status: 'completed', output_text: 'Done after 3 rounds.' });
    expect(done.usage).toMatchObject({ input_tokens: 200, output_tokens: 40 });

    // Streamed in the background: every event numbered; retrieving with starting_after goes on from there.
    const events: Array<{ type: string; sequence_number: number }> = [];
    const stream = await client.responses.create({ model: agentId, input: 'rounds: 2', background: true, stream: true });
    const first = await stream[Symbol.asyncIterator]().next();
    events.push(first.value as { type: string; sequence_number: number });
    expect(events[0]).toMatchObject({ type: 'response.created', sequence_number: 0 });
    const id = (first.value as { response: { id: string } }).response.id;
    await local.workflowSteps!.drain();
    const resumed = await client.responses.retrieve(id, { stream: true, starting_after: 0 });
    for await (const event of resumed) events.push(event);
    expect(events.map((e) => e.sequence_number)).toEqual([...events.keys()]);
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.queued', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const replayed: number[] = [];
    for await (const event of await client.responses.retrieve(id, { stream: true, starting_after: 7 })) replayed.push((event as { sequence_number: number }).sequence_number);
    expect(replayed).toEqual([8, 9]);

    // Cancelled while it runs.
    toolDelayMs = 300;
    try {
      const long = await client.responses.create({ model: agentId, input: 'rounds: 20', background: true });
      await expect.poll(async () => (await client.responses.retrieve(long.id)).status, { timeout: 10_000 }).toBe('in_progress');
      const cancelled = await client.responses.cancel(long.id);
      expect(cancelled.status).toBe('cancelled');
      await local.workflowSteps!.drain();
      expect((await client.responses.retrieve(long.id)).status).toBe('cancelled');
      await expect(client.responses.cancel(long.id)).rejects.toMatchObject({ status: 400 });
      // A response answered in the foreground cannot be cancelled.
      await expect(client.responses.cancel(done.id)).rejects.toMatchObject({ status: 400 });
    } finally {
      toolDelayMs = 0;
    }
    await expect(client.responses.create({ model: agentId, input: 'x', background: true, store: false })).rejects.toMatchObject({ status: 400, param: 'store' });
  }, 60_000);
});
