import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { startScheduled } from '../shared/workflows/schedules';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * A workflow's releases: versions of its definition, aliases that route executions by weight,
 * and executions that record which definition ran.
 */
const app = createLocalApp(testRt);
const definition = (expression: string) => ({ name: 'Releases', steps: [{ id: 'answer', type: 'transform', expression }] });

describe('workflow versions and aliases', () => {
  let t: TestTenant;
  let id: string;
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
  const execute = (body: Record<string, unknown>) => api('POST', `/v1/workflows/${id}/execute`, { input: 'x', ...body });

  beforeAll(async () => {
    t = await newTenant();
    id = (await api('POST', '/v1/workflows', definition('"one"'))).body.data.id;
  });

  it('runs a version, an alias’s choice or the draft, and records which on the execution', async () => {
    expect((await api('POST', `/v1/workflows/${id}/versions`, { description: 'first' })).body.data).toMatchObject({ workflowId: id, version: 1, description: 'first', workflow: { steps: [{ id: 'answer' }] } });
    await api('PUT', `/v1/workflows/${id}`, definition('"two"'));
    expect((await api('POST', `/v1/workflows/${id}/versions`)).body.data.version).toBe(2);
    await api('PUT', `/v1/workflows/${id}`, definition('"draft"'));

    const v1 = await execute({ version: 1 });
    expect(v1.body.data).toMatchObject({ workflowVersion: 1, status: 'succeeded', output: 'one' });
    expect((await execute({})).body.data).toMatchObject({ workflowVersion: 'draft', output: 'draft' });

    expect((await api('PUT', `/v1/workflows/${id}/aliases/live`, { routing: [{ version: 2 }] })).status).toBe(200);
    expect((await execute({ alias: 'live' })).body.data).toMatchObject({ workflowVersion: 2, output: 'two' });
    // A 50/50 split spreads executions over both versions.
    await api('PUT', `/v1/workflows/${id}/aliases/live`, { routing: [{ version: 1, weight: 50 }, { version: 2, weight: 50 }] });
    const split = await Promise.all(Array.from({ length: 40 }, () => execute({ alias: 'live', mode: 'async' })));
    const versions = new Set(split.map((r) => r.body.data.workflowVersion));
    expect(versions).toEqual(new Set([1, 2]));

    expect((await execute({ alias: 'nope' })).status).toBe(404);
    expect((await execute({ version: 9 })).status).toBe(404);
    expect((await execute({ alias: 'live', version: 1 })).body.error.details.field).toBe('version');
  });

  it('runs an agent step against a release of the agent named agt_…:<alias>', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Helper', model: 'local/extractive' })).body.data.id as string;
    await api('POST', `/v1/agents/${agentId}/versions`);
    await api('PUT', `/v1/agents/${agentId}/aliases/live`, { routing: [{ version: 1 }] });
    const step = (address: string) => ({ name: 'asks', steps: [{ id: 'ask', type: 'agent', config: { agentId: address, message: 'hello {{input}}' } }] });
    const wf = (await api('POST', '/v1/workflows', step(`${agentId}:live`))).body.data.id as string;
    const ran = await api('POST', `/v1/workflows/${wf}/execute`, { input: 'there' });
    expect(ran.body.data.status).toBe('succeeded');
    expect(ran.body.data.output.agentVersion).toBe(1);
    for (const bad of [`${agentId}:Not Ok`, 'agt_01kaaaaaaaaaaaaaaaaaaaaaaa:live']) {
      const refused = await api('POST', '/v1/workflows', step(bad));
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error.details.field, bad).toBe('steps[0].config.agentId');
    }
  });

  it('starts a schedule’s and an inbound hook’s runs on the version their alias routes to', async () => {
    const wf = (await api('POST', '/v1/workflows', { ...definition('"v1"'), schedules: [{ cron: '0 9 * * *', alias: 'stable' }, { cron: '0 10 * * *', alias: 'gone' }] })).body.data;
    expect(wf.schedules[0].alias).toBe('stable');
    await api('POST', `/v1/workflows/${wf.id}/versions`);
    const { id: _i, createdAt: _c, updatedAt: _u, version: _v, ...fields } = wf;
    await api('PUT', `/v1/workflows/${wf.id}`, { ...fields, steps: definition('"draft"').steps });
    await api('PUT', `/v1/workflows/${wf.id}/aliases/stable`, { routing: [{ version: 1 }] });
    const runs = async () => (await api('GET', `/v1/workflows/${wf.id}/executions`)).body.data as Array<{ workflowVersion: number | string; output: unknown }>;

    const at = new Date(Date.UTC(2026, 10, 27, 9)).toISOString();
    await startScheduled(testRt, { type: 'scheduled', tenantId: t.scope.tenantId, workflowId: wf.id, schedule: 0, at });
    // A schedule whose alias does not exist (deleted since) skips its time instead of failing over and over.
    await startScheduled(testRt, { type: 'scheduled', tenantId: t.scope.tenantId, workflowId: wf.id, schedule: 1, at });
    await testLocal.workflowSteps!.drain();
    expect((await runs()).map((r) => [r.workflowVersion, r.output])).toEqual([[1, 'v1']]);

    expect((await api('POST', `/v1/workflows/${wf.id}/hooks`, { name: 'shop', alias: 'nope' })).body.error.details.field).toBe('alias');
    const hook = (await api('POST', `/v1/workflows/${wf.id}/hooks`, { name: 'shop', alias: 'stable' })).body.data;
    expect(hook.alias).toBe('stable');
    expect((await api('GET', `/v1/workflows/${wf.id}/hooks`)).body.data[0].alias).toBe('stable');
    expect((await app.request(hook.url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(202);
    await testLocal.workflowSteps!.drain();
    expect((await runs()).map((r) => [r.workflowVersion, r.output])).toEqual([[1, 'v1'], [1, 'v1']]);
  });

  it('diffs versions, refuses to delete a routed one, and deletes releases with the workflow', async () => {
    const diff = await api('GET', `/v1/workflows/${id}/versions/1/diff?against=2`);
    expect(diff.body.data.changes).toEqual([{ op: 'replace', path: '/steps/0/config/expression', value: '"two"' }]);
    expect((await api('DELETE', `/v1/workflows/${id}/versions/1`)).status).toBe(409);
    expect((await api('GET', `/v1/workflows/${id}/aliases`)).body.data.map((a: { name: string }) => a.name)).toEqual(['live']);
    expect((await api('DELETE', `/v1/workflows/${id}`)).status).toBe(200);
    const recreated = (await api('POST', '/v1/workflows', definition('"again"'))).body.data.id as string;
    expect((await api('GET', `/v1/workflows/${recreated}/versions`)).body.data).toEqual([]);
    expect((await api('GET', `/v1/workflows/${id}/versions`)).status).toBe(404);
  });
});
