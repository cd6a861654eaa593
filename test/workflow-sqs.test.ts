import { createServer } from 'node:http';
import { SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflowsApp } from '../functions/workflows/app';
import { deliverWebhook } from '../shared/workflows/webhooks';
import { consumeWorkflowMessage } from '../shared/workflows/execution';
import type { StepsQueueMessage, WebhookMessage, WorkflowMessage } from '../shared/queue/messages';
import { MAX_RECEIVES } from '../shared/queue/queue';
import { sqsHandler } from '../shared/queue/sqs-handler';
import { sqsQueue } from '../shared/queue/sqs-queue';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { pollOnce } from './helpers/sqs';
import { newTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

/**
 * The AWS path of workflows: the API and the workers send to SQS (fauxqs, an SQS-compatible
 * server); the steps and webhook Lambda handlers receive real SQS event records. A map's items
 * fan out as messages; a webhook receiver failing twice is retried through the queue's delays.
 */
let server: FauxqsServer;
let sqs: SQSClient;
let stepsUrl: string;
let webhooksUrl: string;
let rt: Runtime;
let app: ReturnType<typeof createWorkflowsApp>;
const stepsHandler = sqsHandler<WorkflowMessage>((message, delivery) => consumeWorkflowMessage(rt, message, delivery));
const webhookHandler = sqsHandler<WebhookMessage>((message, delivery) => deliverWebhook(rt, message, delivery));
let stepMessages = 0;

let failNext = 0;
const attempts: string[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    attempts.push(JSON.parse(body).id as string);
    if (failNext-- > 0) return res.writeHead(503).end();
    res.writeHead(200).end('ok');
  });
});

beforeAll(async () => {
  server = await startFauxqs({ port: 0, logger: false });
  const queue = (name: string) => {
    const dlq = server.createQueue(`${name}-dlq`).queueArn;
    return server.createQueue(name, { attributes: { VisibilityTimeout: '5', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq, maxReceiveCount: String(MAX_RECEIVES) }) } }).queueUrl;
  };
  stepsUrl = queue('workflow-steps');
  webhooksUrl = queue('webhooks');
  sqs = new SQSClient({ endpoint: server.address, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const steps = sqsQueue<StepsQueueMessage>(() => Promise.resolve(sqs), stepsUrl);
  rt = { ...testRt, queues: { ...testRt.queues, workflowSteps: { send: (messages, options) => ((stepMessages += messages.length), steps.send(messages, options)), pending: () => steps.pending() }, webhooks: sqsQueue<WebhookMessage>(() => Promise.resolve(sqs), webhooksUrl) } };
  app = createWorkflowsApp(rt);
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  sqs.destroy();
  await server.stop();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** Polls both queues as the event source mappings would, until the execution settles and nothing is left. */
async function work(key: string, workflowId: string, executionId: string, until: (e: { status: string }) => boolean) {
  for (let i = 0; i < 400; i++) {
    const [a, b] = await Promise.all([pollOnce(sqs, stepsUrl, stepsHandler), pollOnce(sqs, webhooksUrl, webhookHandler)]);
    const e = (await call(app, 'GET', `/v1/workflows/${workflowId}/executions/${executionId}`, { key })).body.data;
    if (until(e) && a.received === 0 && b.received === 0) return e;
    if (a.received + b.received === 0) await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the execution did not settle');
}

describe('workflows through SQS', () => {
  it('fans a map out through the queue, then delivers the completion webhook after two failed attempts', async () => {
    const t = await newTenant('unlimited');
    const url = `http://localhost:${(receiver.address() as { port: number }).port}/done`;
    const wf = await call(app, 'POST', '/v1/workflows', {
      key: t.apiKey,
      body: {
        name: 'fan-out',
        steps: [
          { id: 'each', type: 'map', items: '[1..40]', concurrency: 5, steps: [{ id: 'square', type: 'transform', expression: 'item * item' }] },
          { id: 'sum', type: 'transform', expression: '$sum(steps.each.output.results)' },
        ],
        webhook: { url, secret: 'a-webhook-secret-of-some-length' },
      },
    });
    expect(wf.status).toBe(201);
    failNext = 2;
    stepMessages = 0;
    const started = await call(app, 'POST', `/v1/workflows/${wf.body.data.id}/execute`, { key: t.apiKey, body: { mode: 'async' } });
    expect(started.status).toBe(202);
    const done = await work(t.apiKey, wf.body.data.id, started.body.data.id, (e) => e.status === 'succeeded' && attempts.length >= 3);
    expect(done.output).toBe(Array.from({ length: 40 }, (_, i) => (i + 1) ** 2).reduce((a, b) => a + b, 0));
    // Two step messages, and one per item.
    expect(stepMessages).toBe(2 + 40);
    const deliveries = (await call(app, 'GET', `/v1/workflows/${wf.body.data.id}/executions/${started.body.data.id}/deliveries`, { key: t.apiKey })).body.data;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ status: 'delivered', attempt: 3 });
    expect(deliveries[0].attempts.map((a: { status: number }) => a.status)).toEqual([503, 503, 200]);
    expect(attempts).toEqual(Array(3).fill(`${started.body.data.id}.succeeded`));
  }, 60_000);
});
