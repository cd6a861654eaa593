import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call, type TestResponse } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Re-running a finished execution from a step, against a real local server that counts what it
 * is sent: the steps before keep their outputs and their effects are not repeated.
 */
const app = createLocalApp(testRt);

const hits = new Map<string, number>();
const bodies: Record<string, string[]> = {};
let notifyFailures = 0;
const shop = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    const path = new URL(req.url!, 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    (bodies[path] ??= []).push(body);
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (path === '/charge') return json(201, { chargeId: `ch_${hits.get(path)}` });
    if (path === '/notify') return notifyFailures-- > 0 ? json(422, { error: 'no such mailbox' }) : json(200, { sent: true });
    json(200, { ok: true });
  });
});

let base = '';
let t: TestTenant;
const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, body });
const settled = async (workflowId: string, executionId: string) => {
  await testLocal.workflowSteps!.drain();
  return (await api('GET', `/v1/workflows/${workflowId}/executions/${executionId}`)).body.data;
};
const stepOf = (execution: TestResponse['body'], id: string): TestResponse['body'] => (execution.steps as Array<{ id: string }>).find((s) => s.id === id);

describe('re-running an execution from a step', () => {
  let wf: string;
  let failed: { id: string };

  beforeAll(async () => {
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    base = `http://localhost:${(shop.address() as { port: number }).port}`;
    t = await newTenant();
    const created = await api('POST', '/v1/workflows', {
      name: 'charge then notify',
      steps: [
        { id: 'charge', type: 'http', method: 'POST', url: `${base}/charge`, body: { order: '{{parameters.order}}' }, expect: [201] },
        { id: 'audit', type: 'http', method: 'POST', url: `${base}/audit`, body: { order: '{{parameters.order}}' }, dependsOn: [] },
        { id: 'notify', type: 'http', method: 'POST', url: `${base}/notify`, body: { charge: '{{steps.charge.output.body.chargeId}}', note: '{{input}}' }, expect: [200], dependsOn: ['charge'] },
        { id: 'close', type: 'transform', expression: '{"closed": steps.notify.output.body.sent}', dependsOn: ['notify', 'audit'] },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    wf = created.body.data.id;
    notifyFailures = 1;
    const started = await api('POST', `/v1/workflows/${wf}/execute`, { input: 'first', parameters: { order: 'A7' }, mode: 'async' });
    failed = await settled(wf, started.body.data.id);
    expect(failed).toMatchObject({ status: 'failed' });
    expect(stepOf(failed, 'notify')).toMatchObject({ status: 'failed' });
    expect(hits.get('/charge')).toBe(1);
  }, 120_000);
  afterAll(async () => {
    shop.closeAllConnections();
    await new Promise<void>((resolve) => shop.close(() => resolve()));
  });

  it('from a failed step: the steps before keep their outputs and are not sent again; the rest run', async () => {
    const res = await api('POST', `/v1/workflows/${wf}/executions/${failed.id}/rerun`, { fromStep: 'notify' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/workflows/${wf}/executions/${res.body.data.id}`);
    expect(res.body.data).toMatchObject({ rerunOf: { executionId: failed.id, fromStep: 'notify' }, input: 'first', parameters: { order: 'A7' } });
    const rerun = await settled(wf, res.body.data.id);
    expect(rerun.status).toBe('succeeded');
    expect(rerun.output).toEqual({ closed: true });
    // The charge and the audit happened once, in the first execution; only notify was sent again.
    expect(hits.get('/charge')).toBe(1);
    expect(hits.get('/audit')).toBe(1);
    expect(hits.get('/notify')).toBe(2);
    expect(stepOf(rerun, 'charge')).toMatchObject({ status: 'succeeded', reused: true, output: stepOf(failed, 'charge').output });
    expect(stepOf(rerun, 'notify').reused).toBeUndefined();
    // The re-run step read the reused step's output.
    expect(JSON.parse(bodies['/notify']!.at(-1)!)).toEqual({ charge: 'ch_1', note: 'first' });
    // The original is unchanged.
    expect((await api('GET', `/v1/workflows/${wf}/executions/${failed.id}`)).body.data.status).toBe('failed');
  });

  it('from an earlier step: it and everything depending on it run again, with a new input; independent steps are kept', async () => {
    const res = await api('POST', `/v1/workflows/${wf}/executions/${failed.id}/rerun`, { fromStep: 'charge', input: 'second' });
    expect(res.status).toBe(202);
    const rerun = await settled(wf, res.body.data.id);
    expect(rerun.status).toBe('succeeded');
    expect(hits.get('/charge')).toBe(2);
    expect(hits.get('/audit')).toBe(1);
    expect(stepOf(rerun, 'audit').reused).toBe(true);
    expect(JSON.parse(bodies['/notify']!.at(-1)!)).toEqual({ charge: 'ch_2', note: 'second' });
  });

  it('refuses a step the workflow does not have (400 naming fromStep), an unfinished execution (409) and another tenant’s (404)', async () => {
    const unknown = await api('POST', `/v1/workflows/${wf}/executions/${failed.id}/rerun`, { fromStep: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe('fromStep');
    expect(unknown.body.error.message).toContain('charge, audit, notify, close');
    const missing = await api('POST', `/v1/workflows/${wf}/executions/${failed.id}/rerun`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('fromStep');

    const person = (await api('POST', '/v1/workflows', { name: 'ask', steps: [{ id: 'ask', type: 'human', prompt: 'ok?' }] })).body.data.id as string;
    const waiting = await api('POST', `/v1/workflows/${person}/execute`, { mode: 'async' });
    expect((await settled(person, waiting.body.data.id)).status).toBe('waiting');
    const early = await api('POST', `/v1/workflows/${person}/executions/${waiting.body.data.id}/rerun`, { fromStep: 'ask' });
    expect(early.status).toBe(409);

    const other = await newTenant();
    const foreign = await call(app, 'POST', `/v1/workflows/${wf}/executions/${failed.id}/rerun`, { key: other.apiKey, body: { fromStep: 'notify' } });
    expect(foreign.status).toBe(404);
  });
});
