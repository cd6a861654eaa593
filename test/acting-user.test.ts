import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { ToolFailure } from '../shared/errors';
import { scopeOf } from '../shared/tenancy';
import { AuthorizationRequired, toolAuthorization } from '../shared/tools';
import { call } from './helpers/http';
import { pcall, provision, type ProvisionedTenant } from './helpers/platform';
import { testLocal, testPlatformSecrets, testRt } from './helpers/runtime';

/**
 * Who acts is decided once, at the edge: an evaluation case's `context` and a workflow agent step's
 * `userId` are claims that a tenant requiring verified end users refuses when written, and runs
 * for nobody (saying so) when the setting changed since; a user named by such data never uses
 * their connected accounts.
 */
const app = createLocalApp(testRt);
const SECRET = 'an-hs256-secret-for-the-acting-user-tests!!';
let t: ProvisionedTenant;
let sourceId: string;
let agentId: string;
const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(app, method, path, { key: t.apiKey, headers, ...(body === undefined ? {} : { body }) });
const requireTokens = (required: boolean) => pcall(app, 'PUT', '/platform/end-user-auth', t.accessToken, { body: { issuer: 'https://id.example.test/', audience: 'cairn', hs256Secret: SECRET, required } });
const tokenFor = (sub: string, groups: string[] = []) =>
  new SignJWT({ groups }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuer('https://id.example.test/').setAudience('cairn').setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
// The identity settings are read at most every 30 s per instance: each change is seen at once here.
const forgetSettings = () => testRt.caches.endUserAuth.forget(`${t.tenantId}#${scopeOf(t.tenantId).schema}`);

/** Executes a workflow and reads its execution once it has finished (execute answers at once when it finishes fast). */
async function executed(workflowId: string, input: unknown, headers: Record<string, string> = {}) {
  const started = await api('POST', `/v1/workflows/${workflowId}/execute`, { input }, headers);
  expect([200, 202], JSON.stringify(started.body)).toContain(started.status);
  for (let i = 0; i < 60; i++) {
    const got = (await api('GET', `/v1/workflows/${workflowId}/executions/${started.body.data.id}`)).body.data;
    if (!['pending', 'running'].includes(got.status)) return got;
    await testLocal.workflowSteps!.drain();
  }
  throw new Error(`execution ${started.body.data.id} did not finish`);
}

async function evalResults(body: Record<string, unknown>) {
  const started = await api('POST', '/v1/eval-runs', body);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  let run = started.body.data;
  for (let i = 0; i < 80 && run.status !== 'completed'; i++) {
    await testLocal.workflowSteps!.drain();
    run = (await api('GET', `/v1/eval-runs/${run.id}`)).body.data;
  }
  expect(run.status).toBe('completed');
  return (await api('GET', `/v1/eval-runs/${run.id}/results?limit=10`)).body.data as Array<Record<string, unknown>>;
}

beforeAll(async () => {
  t = await provision(app, testPlatformSecrets.adminToken);
  expect((await requireTokens(false)).status).toBe(200);
  const created = await api('POST', '/v1/knowledge-sources', {
    name: 'Payroll',
    type: 'file-collection',
    files: [
      { path: 'pay.md', content: '# Pay days\nSalaries are paid on the 25th of each month.' },
      { path: 'alice-pay.md', content: '# Alice pay review\nAlice salary review: the raise code is RAISE-5521.', access: { users: ['alice'], groups: ['execs'] } },
    ],
  });
  sourceId = created.body.data.id;
  await api('POST', `/v1/knowledge-sources/${sourceId}/connect`, {});
  await testLocal.ingestion!.drain();
  agentId = (await api('POST', '/v1/agents', { name: 'Payroll bot', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [sourceId] })).body.data.id;
});

describe('an evaluation case names its end user only where the tenant takes claims', () => {
  it('refuses a case context when written, and asks for nobody (saying so) when the setting changed since', async () => {
    const workflowId = (await api('POST', '/v1/workflows', { name: 'Look up', steps: [{ id: 'find', type: 'search', config: { knowledgeSourceId: sourceId, query: '{{input}}' } }] })).body.data.id;
    const question = 'What is the raise code in the salary review?';
    const accepted = await api('POST', '/v1/eval-datasets', { name: 'Claims', cases: [{ input: question, context: { userId: 'mallory', groups: ['execs'] } }] });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);

    expect((await requireTokens(true)).status).toBe(200);
    forgetSettings();
    try {
      const refused = await api('POST', '/v1/eval-datasets', { name: 'Claims', cases: [{ input: 'q' }, { input: question, context: { userId: 'mallory', groups: ['execs'] } }] });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe('cases[1].context');
      const appended = await api('POST', `/v1/eval-datasets/${accepted.body.data.id}/cases`, { cases: [{ input: question, context: { userId: 'mallory' } }] });
      expect(appended.status).toBe(400);
      expect(appended.body.error.details.field).toBe('cases[0].context');

      const [result] = await evalResults({ datasetId: accepted.body.data.id, target: { workflowId }, scorers: ['contains'] });
      expect(JSON.stringify(result)).not.toContain('RAISE-5521');
      expect(result!.note).toMatch(/nobody.*requires verified end users/);
      const [asAgent] = await evalResults({ datasetId: accepted.body.data.id, target: { agentId }, scorers: ['contains'] });
      expect(JSON.stringify(asAgent)).not.toContain('RAISE-5521');
      expect(asAgent!.note).toMatch(/nobody/);
    } finally {
      await requireTokens(false);
      forgetSettings();
    }
    // Where claims are taken, the case asks as its user.
    const [claimed] = await evalResults({ datasetId: accepted.body.data.id, target: { workflowId }, scorers: ['contains'] });
    expect(JSON.stringify(claimed)).toContain('RAISE-5521');
    expect(claimed!.note).toBeUndefined();
  });
});

describe('a workflow agent step names its end user only where the tenant takes claims', () => {
  it('refuses the step’s userId when written, and answers for nobody (saying so) when the setting changed since', async () => {
    const steps = [{ id: 'ask', type: 'agent', config: { agentId, message: 'What is the raise code in the salary review?', userId: '{{input}}' } }];
    const workflowId = (await api('POST', '/v1/workflows', { name: 'Ask as', steps })).body.data.id;
    expect((await executed(workflowId, 'alice')).output.reply).toContain('RAISE-5521');

    expect((await requireTokens(true)).status).toBe(200);
    forgetSettings();
    try {
      const refused = await api('POST', '/v1/workflows', { name: 'Ask as', steps });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.field).toBe('steps[0].config.userId');
      const done = await executed(workflowId, 'alice', { 'x-end-user-token': await tokenFor('bob') });
      expect(done.status).toBe('succeeded');
      expect(JSON.stringify(done)).not.toContain('RAISE-5521');
      expect(done.output.note).toMatch(/userId was not used.*nobody/);
      // The execution's own verified user is who the step acts for when it names nobody else.
      expect((await executed(workflowId, 'alice', { 'x-end-user-token': await tokenFor('alice') })).output.reply).toContain('RAISE-5521');
    } finally {
      await requireTokens(false);
      forgetSettings();
    }
  });

  it('never uses the connected accounts of a user named by data, and uses those of a user the caller claims', async () => {
    const scope = scopeOf(t.tenantId);
    const auth = { type: 'oauth2' as const, provider: 'calendar' };
    const named = toolAuthorization({ rt: testRt, scope, user: { id: 'alice', groups: [], verified: false, named: true } }, 'calendar', auth);
    await expect(named).rejects.toThrow(ToolFailure);
    await expect(named).rejects.toThrow(/named by a workflow step or an evaluation case/);
    // A claim by the caller goes on to the user's connection (there is none here: they are asked to connect).
    await expect(toolAuthorization({ rt: testRt, scope, user: { id: 'alice', groups: [], verified: false } }, 'calendar', auth)).rejects.toThrow(AuthorizationRequired);
    expect((await requireTokens(true)).status).toBe(200);
    forgetSettings();
    try {
      await expect(toolAuthorization({ rt: testRt, scope, user: { id: 'alice', groups: [], verified: false } }, 'calendar', auth)).rejects.toThrow(/not verified/);
      await expect(toolAuthorization({ rt: testRt, scope, user: { id: 'alice', groups: [], verified: true } }, 'calendar', auth)).rejects.toThrow(AuthorizationRequired);
    } finally {
      await requireTokens(false);
      forgetSettings();
    }
  });
});
