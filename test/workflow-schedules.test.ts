import { createServer } from 'node:http';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { startScheduled, tickSchedules } from '../shared/workflows/schedules';
import { awsCronOf } from '../shared/schedules/aws-cron';
import { eventBridgeScheduler, scheduleName } from '../shared/schedules/eventbridge-scheduler';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { testLocal, testRt } from './helpers/runtime';

/**
 * Schedules: checked when written, kept for local mode's ticker (driven here by a chosen clock, not
 * by waiting), fired once per scheduled time; and, for AWS, the EventBridge Scheduler requests the
 * adapter sends, against a local endpoint that answers as the service does.
 */
const app = createLocalApp(testRt);
let t: TestTenant;

const listExecutions = async (id: string) => (await call(app, 'GET', `/v1/workflows/${id}/executions`, { key: t.apiKey })).body.data as Array<{ id: string; input: string; parameters: Record<string, unknown> }>;
const storedFor = async (workflowId: string) => (await testRt.store.schedules.due(Number.MAX_SAFE_INTEGER)).filter((s) => s.workflowId === workflowId).sort((a, b) => a.index - b.index);

describe('workflow schedules (local mode)', () => {
  beforeAll(async () => {
    t = await newTenant();
  });

  it('refuses a bad cron, both day fields, or an unknown time zone, naming the field', async () => {
    const bad = async (schedule: Record<string, unknown>) => {
      const res = await call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'x', steps: [{ type: 'transform', expression: '1' }], schedules: [schedule] } });
      expect(res.status).toBe(400);
      return res.body.error;
    };
    expect((await bad({ cron: '61 * * * *' })).details.field).toBe('schedules[0].cron');
    expect((await bad({ cron: '* * * *' })).message).toContain('five fields');
    expect((await bad({ cron: '0 9 1 * 1' })).message).toContain('not both');
    expect((await bad({ cron: '0 9 * * *', timezone: 'Mars/Base' })).details.field).toBe('schedules[0].timezone');
  });

  it('fires when due under a chosen clock, once per scheduled time, with the schedule’s input; follows replaces and deletes', async () => {
    const created = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: {
        name: 'nightly',
        steps: [{ type: 'transform', expression: '{ "kind": parameters.kind, "input": input }' }],
        schedules: [
          { cron: '*/5 * * * *', input: 'tick', parameters: { kind: 'five-minutely' } },
          { cron: '0 9 * * *', timezone: 'Europe/Paris' },
          { cron: '0 0 * * *', enabled: false },
        ],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const stored = await storedFor(id);
    // The disabled one is not kept; 09:00 in Paris is 08:00 UTC in winter.
    expect(stored.map((s) => s.index)).toEqual([0, 1]);
    expect(new Date(stored[1]!.nextRunAt).toISOString()).toMatch(/T0[78]:00:00.000Z$/);
    expect(new Date(stored[0]!.nextRunAt).getUTCMinutes() % 5).toBe(0);

    const due = stored[0]!.nextRunAt;
    expect(await tickSchedules(testRt, due - 1)).toBe(0);
    expect(await tickSchedules(testRt, due + 1000)).toBeGreaterThanOrEqual(1);
    // The same moment again: already moved on to the next time.
    expect(await tickSchedules(testRt, due + 1000)).toBe(0);
    await testLocal.workflowSteps!.drain();
    const runs = await listExecutions(id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ input: 'tick', parameters: { kind: 'five-minutely' } });
    expect((await storedFor(id))[0]!.nextRunAt).toBe(due + 5 * 60_000);

    // A scheduled message delivered twice starts one execution.
    const at = new Date(due + 5 * 60_000).toISOString();
    const message = { type: 'scheduled' as const, tenantId: t.scope.tenantId, workflowId: id, schedule: 0, at };
    await Promise.all([startScheduled(testRt, message), startScheduled(testRt, message)]);
    expect(await listExecutions(id)).toHaveLength(2);

    const replaced = await call(app, 'PUT', `/v1/workflows/${id}`, { key: t.apiKey, body: { ...created.body.data, schedules: [{ cron: '30 6 * * 1-5' }] } });
    expect(replaced.status).toBe(200);
    expect((await storedFor(id)).map((s) => [s.index, s.cron])).toEqual([[0, '30 6 * * 1-5']]);
    expect((await call(app, 'DELETE', `/v1/workflows/${id}`, { key: t.apiKey })).status).toBe(200);
    expect(await storedFor(id)).toEqual([]);
  });
});

describe('workflow schedules (EventBridge Scheduler)', () => {
  it('writes cron the way EventBridge Scheduler reads it', () => {
    expect(awsCronOf('0 9 * * 1-5')).toBe('cron(0 9 ? * 2-6 *)');
    expect(awsCronOf('*/15 * * * *')).toBe('cron(*/15 * * * ? *)');
    expect(awsCronOf('0 0 1 * *')).toBe('cron(0 0 1 * ? *)');
    expect(awsCronOf('0 8 * * 0,6')).toBe('cron(0 8 ? * 1,7 *)');
    expect(awsCronOf('0 8 * * MON')).toBe('cron(0 8 ? * MON *)');
  });

  /** A Scheduler endpoint on this machine: schedule names it knows, and every request it was sent. */
  const requests: Array<{ method: string; path: string; body: Record<string, unknown> }> = [];
  const known = new Set<string>();
  const service = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const name = decodeURIComponent(url.pathname.split('/').pop()!);
      requests.push({ method: req.method!, path: url.pathname, body: text ? JSON.parse(text) : {} });
      const error = (status: number, type: string) => res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type }).end(JSON.stringify({ Message: type }));
      if (req.method === 'POST' && known.has(name)) return error(409, 'ConflictException');
      if (req.method === 'DELETE' && !known.has(name)) return error(404, 'ResourceNotFoundException');
      if (req.method === 'POST') known.add(name);
      if (req.method === 'DELETE') known.delete(name);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ScheduleArn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/cairn/${name}` }));
    });
  });
  let client: SchedulerClient;
  beforeAll(async () => {
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    client = new SchedulerClient({ region: 'eu-west-1', endpoint: `http://127.0.0.1:${(service.address() as { port: number }).port}`, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } });
  });
  afterAll(async () => {
    client.destroy();
    await new Promise<void>((resolve) => service.close(() => resolve()));
  });

  it('creates a schedule per cron targeting the steps queue, updates them on change, deletes the ones dropped', async () => {
    const scheduler = eventBridgeScheduler({ groupName: 'cairn-workflows', roleArn: 'arn:aws:iam::123456789012:role/scheduler', queueArn: 'arn:aws:sqs:eu-west-1:123456789012:steps', client });
    const scope = { tenantId: 'acme', schema: 't_acme' };
    await scheduler.put(scope, 'wf_1', [{ cron: '0 9 * * 1-5', timezone: 'Europe/Paris', enabled: true }, { cron: '*/10 * * * *', timezone: 'UTC', enabled: false }], 0);
    expect(requests.map((r) => [r.method, r.path])).toEqual([
      ['POST', `/schedules/${scheduleName('acme', 'wf_1', 0)}`],
      ['POST', `/schedules/${scheduleName('acme', 'wf_1', 1)}`],
    ]);
    const first = requests[0]!.body;
    expect(first).toMatchObject({ GroupName: 'cairn-workflows', ScheduleExpression: 'cron(0 9 ? * 2-6 *)', ScheduleExpressionTimezone: 'Europe/Paris', State: 'ENABLED', FlexibleTimeWindow: { Mode: 'OFF' } });
    expect(first.Target).toMatchObject({ Arn: 'arn:aws:sqs:eu-west-1:123456789012:steps', RoleArn: 'arn:aws:iam::123456789012:role/scheduler' });
    expect(JSON.parse((first.Target as { Input: string }).Input)).toEqual({ type: 'scheduled', tenantId: 'acme', workflowId: 'wf_1', schedule: 0, at: '<aws.scheduler.scheduled-time>' });
    expect(requests[1]!.body.State).toBe('DISABLED');

    requests.length = 0;
    await scheduler.put(scope, 'wf_1', [{ cron: '0 10 * * *', timezone: 'UTC', enabled: true }], 2);
    // An existing schedule is updated (the create answers 409); the one dropped is deleted.
    expect(requests.map((r) => r.method)).toEqual(['POST', 'PUT', 'DELETE']);
    expect(requests[1]!.body.ScheduleExpression).toBe('cron(0 10 * * ? *)');
    expect(requests[2]!.path).toBe(`/schedules/${scheduleName('acme', 'wf_1', 1)}`);
    // Deleting what is already gone is not an error.
    await scheduler.put(scope, 'wf_1', [], 3);
    expect(known.size).toBe(0);
  });
});
