import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { consumeEvalCase } from '../shared/evals';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Evaluation runs: a dataset run against an agent's versions through the steps queue, scored per
 * case, summed up with thresholds, and compared with an earlier run to find regressions.
 */
const app = createLocalApp(testRt);
const files = [
  { path: 'policies/returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery. Refunds reach your card within 5 business days.' },
  { path: 'shipping.md', content: '# Shipping\n\nStandard shipping takes 3 to 5 days. Express shipping arrives the next day.' },
];
const cases = [
  { input: 'How long do I have to return an item?', expected: { contains: ['30 days'], sources: ['policies/returns.md'] } },
  { input: 'How long does standard shipping take?', expected: { contains: ['3 to 5 days'], sources: ['shipping.md'] } },
  { input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'When does express shipping arrive?' }], expected: { contains: ['next day'], sources: ['shipping.md'] } },
  { input: 'How long until a refund reaches my card?', expected: { contains: ['5 business days'] } },
];

describe('evaluation runs', () => {
  let t: TestTenant;
  let agentId: string;
  let datasetId: string;
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
  /** Runs the queue until the run has finished. */
  async function finished(runId: string) {
    await testLocal.workflowSteps!.drain();
    return (await api('GET', `/v1/eval-runs/${runId}`)).body.data;
  }

  beforeAll(async () => {
    t = await newTenant();
    const ksId = (await api('POST', '/v1/knowledge-sources', { name: 'Help', type: 'file-collection', files })).body.data.id;
    await api('POST', `/v1/knowledge-sources/${ksId}/connect`, {});
    await testLocal.ingestion!.drain();
    agentId = (await api('POST', '/v1/agents', { name: 'Support', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ksId] })).body.data.id;
    await api('POST', `/v1/agents/${agentId}/versions`, { description: 'grounded' });
    // Version 2 is a deliberate regression: it no longer searches its sources.
    await api('PUT', `/v1/agents/${agentId}`, { name: 'Support', model: 'local/extractive', capabilities: ['chat'], knowledgeSourceIds: [] });
    await api('POST', `/v1/agents/${agentId}/versions`, { description: 'ungrounded' });
    datasetId = (await api('POST', '/v1/eval-datasets', { name: 'Help centre', cases })).body.data.id;
  });

  let baseline: string;
  it('runs every case through the queue, scores each, and sums the run up against its thresholds', async () => {
    const started = await api('POST', '/v1/eval-runs', { datasetId, target: { agentId, version: 1 }, scorers: ['contains', 'citations', 'latency'], thresholds: { contains: 0.75, citations: 0.5 }, maxLatencyMs: 60_000, concurrency: 2 });
    expect(started.status).toBe(202);
    baseline = started.body.data.id;
    expect(baseline).toMatch(/^evr_/);
    expect(started.headers.get('location')).toBe(`/v1/eval-runs/${baseline}`);
    expect(started.body.data).toMatchObject({ status: 'queued', total: 4, progress: { done: 0, total: 4 } });
    const run = await finished(baseline);
    expect(run).toMatchObject({ status: 'completed', progress: { done: 4, total: 4 } });
    // Every answer holds its phrase; the refund case has no expected.sources, so citations scores three cases.
    expect(run.summary).toMatchObject({ cases: 4, scores: { contains: 1, latency: 1 }, scored: { contains: 4, citations: 3, latency: 4 }, passed: true, failedThresholds: [], errors: 0, usage: { costUsd: 0 } });
    expect(run.summary.scores.citations).toBeGreaterThanOrEqual(0.5);
    expect(run.summary.latencyMs.p95).toBeGreaterThanOrEqual(run.summary.latencyMs.p50);

    const results = (await api('GET', `/v1/eval-runs/${baseline}/results?limit=10`)).body.data;
    expect(results.map((r: { position: number }) => r.position)).toEqual([1, 2, 3, 4]);
    expect(results[0]).toMatchObject({ output: expect.stringContaining('30 days'), scores: { contains: 1 }, targetVersion: 1, model: 'local/extractive' });
    expect(results[0].detail.citations.recall).toBe(1);
    expect(results[3].skipped).toEqual({ citations: 'the case has no expected.sources' });
    // Each case's trace is reachable through its request id.
    const trace = await api('GET', `/v1/traces/${results[0].requestId}`);
    expect(trace.status).toBe(200);
    expect(trace.body.data.spans.map((s: { name: string }) => s.name)).toContain('eval.case 1');
  });

  it('fails a run whose mean misses a threshold, and names the cases that regressed against the earlier run', async () => {
    const started = await api('POST', '/v1/eval-runs', { datasetId, target: { agentId, version: 2 }, scorers: ['contains', 'citations'], thresholds: { contains: 0.75, citations: 0.5 }, compareTo: baseline });
    const run = await finished(started.body.data.id);
    expect(run.status).toBe('completed');
    expect(run.summary.passed).toBe(false);
    expect(run.summary.scores).toEqual({ contains: 0, citations: 0 });
    expect(run.summary.failedThresholds).toEqual([
      { scorer: 'contains', min: 0.75, mean: 0 },
      { scorer: 'citations', min: 0.5, mean: 0 },
    ]);
    const caseIds = (await api('GET', `/v1/eval-datasets/${datasetId}/cases`)).body.data.map((c: { id: string }) => c.id);
    expect(run.summary.regressions.sort()).toEqual([...caseIds].sort());
    expect(run.summary.improvements).toEqual([]);
    const listed = (await api('GET', `/v1/eval-runs?datasetId=${datasetId}`)).body.data;
    expect(listed.map((r: { id: string; progress: { done: number; total: number } }) => [r.id, r.progress])).toEqual([
      [run.id, { done: 4, total: 4 }],
      [baseline, { done: 4, total: 4 }],
    ]);
  });

  it('refuses what cannot run with a 4xx naming it', async () => {
    const bad: Array<[unknown, number, string?]> = [
      [{ datasetId, target: { agentId }, scorers: ['contains', 'vibes'] }, 400, 'scorers[1]'],
      [{ datasetId, target: { agentId }, scorers: ['contains'], thresholds: { f1: 0.5 } }, 400, 'thresholds.f1'],
      [{ datasetId, target: { agentId, alias: 'live', version: 1 }, scorers: ['contains'] }, 400, 'target.version'],
      [{ datasetId: 'eds_01kaaaaaaaaaaaaaaaaaaaaaaa', target: { agentId }, scorers: ['contains'] }, 404],
      [{ datasetId, target: { agentId: 'agt_01kaaaaaaaaaaaaaaaaaaaaaaa' }, scorers: ['contains'] }, 404],
      [{ datasetId, target: { agentId, alias: 'nope' }, scorers: ['contains'] }, 404],
      [{ datasetId, target: { agentId, version: 9 }, scorers: ['contains'] }, 404],
    ];
    for (const [body, status, field] of bad) {
      const res = await api('POST', '/v1/eval-runs', body);
      expect([res.status, res.body.error?.details?.field]).toEqual([status, field]);
    }
    const empty = (await api('POST', '/v1/eval-datasets', { name: 'Empty' })).body.data.id;
    expect((await api('POST', '/v1/eval-runs', { datasetId: empty, target: { agentId }, scorers: ['contains'] })).body.error.details.field).toBe('datasetId');
    const other = (await api('POST', '/v1/eval-datasets', { name: 'Other', cases: [{ input: 'q' }] })).body.data.id;
    expect((await api('POST', '/v1/eval-runs', { datasetId: other, target: { agentId }, scorers: ['contains'], compareTo: baseline })).body.error.details.field).toBe('compareTo');
    expect((await call(app, 'GET', `/v1/eval-runs/${baseline}`, { key: (await newTenant()).apiKey })).status).toBe(404);
  });

  it('cancels a run, runs no more of its cases, and will not delete a dataset under a run in flight', async () => {
    // Forty cases one at a time: the run is still going when the cancel comes (local mode hands a
    // case to its worker as it is queued, and four quick cases could all be done by then).
    const long = (await api('POST', '/v1/eval-datasets', { name: 'Long', cases: Array.from({ length: 10 }, () => cases).flat() })).body.data.id as string;
    const started = (await api('POST', '/v1/eval-runs', { datasetId: long, target: { agentId }, scorers: ['contains'], concurrency: 1 })).body.data;
    const busy = await api('DELETE', `/v1/eval-datasets/${long}`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.details.runs).toEqual([started.id]);
    const canceled = await api('POST', `/v1/eval-runs/${started.id}/cancel`);
    expect(canceled.body.data.status).toBe('canceled');
    // The case in flight when it was canceled may finish; none after it starts.
    const run = await finished(started.id);
    expect(run.status).toBe('canceled');
    expect(run.progress.done).toBeLessThanOrEqual(canceled.body.data.progress.done + 1);
    expect(run.progress.done).toBeLessThan(40);
    expect(run).not.toHaveProperty('summary');
    expect((await api('POST', `/v1/eval-runs/${started.id}/cancel`)).status).toBe(409);
    // A case delivered after the cancel does nothing.
    const before = (await api('GET', `/v1/eval-runs/${started.id}/results`)).body.data.length;
    await consumeEvalCase(testRt, { type: 'eval-case', tenantId: t.scope.tenantId, runId: started.id, position: 4 }, { receiveCount: 1, maxReceives: 5 });
    expect((await api('GET', `/v1/eval-runs/${started.id}/results`)).body.data).toHaveLength(before);
  });

  it('counts a case delivered twice once', async () => {
    const started = (await api('POST', '/v1/eval-runs', { datasetId, target: { agentId, version: 1 }, scorers: ['contains'], concurrency: 1 })).body.data;
    const again = { type: 'eval-case' as const, tenantId: t.scope.tenantId, runId: started.id, position: 1 };
    await consumeEvalCase(testRt, again, { receiveCount: 1, maxReceives: 5 });
    await consumeEvalCase(testRt, again, { receiveCount: 2, maxReceives: 5 });
    const run = await finished(started.id);
    expect(run).toMatchObject({ status: 'completed', progress: { done: 4, total: 4 }, summary: { cases: 4, scores: { contains: 1 } } });
  });

  it('runs a workflow target: each case an execution of the version named, its output scored', async () => {
    const workflowId = (await api('POST', '/v1/workflows', { name: 'Answer', steps: [{ id: 'ask', type: 'agent', config: { agentId: `${agentId}:1`, message: '{{input}}' } }] })).body.data.id;
    await api('POST', `/v1/workflows/${workflowId}/versions`, {});
    const started = await api('POST', '/v1/eval-runs', { datasetId, target: { workflowId, version: 1 }, scorers: ['contains', 'citations'], thresholds: { contains: 0.75 }, concurrency: 2 });
    expect(started.status).toBe(202);
    const run = await finished(started.body.data.id);
    expect(run).toMatchObject({ status: 'completed', target: { workflowId, version: 1 }, summary: { cases: 4, scores: { contains: 1 }, passed: true, errors: 0 } });
    const results = (await api('GET', `/v1/eval-runs/${started.body.data.id}/results`)).body.data;
    // The agent step's reply is the output; its sources are the cited paths.
    expect(results[0]).toMatchObject({ output: expect.stringContaining('30 days'), targetVersion: 1, detail: { citations: { recall: 1 } } });
    expect(results[0].latencyMs).toBeGreaterThan(0);
    // The execution is the workflow's like any other: listed under it.
    expect((await api('GET', `/v1/workflows/${workflowId}/executions`)).body.data).toHaveLength(4);
  });

  it('records a workflow execution that fails as the case’s error, and refuses unknown or doubled targets', async () => {
    const failing = (await api('POST', '/v1/workflows', { name: 'Broken', steps: [{ id: 'ask', type: 'human', config: { prompt: 'Answer {{input}}', timeoutSeconds: 1, onTimeout: 'fail' } }] })).body;
    expect(failing.data?.id ?? failing).toMatch(/^wf_/);
    const workflowId = failing.data.id;
    const one = (await api('POST', '/v1/eval-datasets', { name: 'One', cases: [cases[0]] })).body.data.id;
    const started = (await api('POST', '/v1/eval-runs', { datasetId: one, target: { workflowId }, scorers: ['contains'] })).body.data;
    const run = await finished(started.id);
    expect(run).toMatchObject({ status: 'failed', summary: { errors: 1, casesPassed: 0 } });
    const [result] = (await api('GET', `/v1/eval-runs/${started.id}/results`)).body.data;
    expect(result.error).toMatch(/^execution exe_\w+ failed/);

    expect((await api('POST', '/v1/eval-runs', { datasetId, target: { workflowId: 'wf_missing' }, scorers: ['contains'] })).status).toBe(404);
    expect((await api('POST', '/v1/eval-runs', { datasetId, target: { workflowId, version: 7 }, scorers: ['contains'] })).status).toBe(404);
    const both = await api('POST', '/v1/eval-runs', { datasetId, target: { workflowId, agentId }, scorers: ['contains'] });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain('target.agentId');
  });
});
