import type { MessageAttributeValue, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config';
import { loadOnce } from '../load-once';
import { traceCarrier } from '../telemetry';
import type { Runtime } from '../runtime';
import { unconfiguredQueue, type Queue } from './queue';

const sqs = loadOnce(() => import('@aws-sdk/client-sqs'));

/** Sends JSON messages in batches of ten (SQS's limit), resending any the service rejects; the SDK's client is made on first use. */
export function sqsQueue<M>(client: () => Promise<SQSClient>, queueUrl: string): Queue<M> {
  return {
    async send(messages, options = {}) {
      const { SendMessageBatchCommand } = await sqs();
      const delay = options.delaySeconds ? Math.min(900, Math.max(0, Math.round(options.delaySeconds))) : undefined;
      const attributes = messageAttributes(traceCarrier());
      for (let i = 0; i < messages.length; i += 10) {
        let entries = messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(m), DelaySeconds: delay, MessageAttributes: attributes }));
        for (let attempt = 0; entries.length > 0; attempt++) {
          if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
          const out = await (await client()).send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
          const failed = new Set((out.Failed ?? []).map((f) => f.Id));
          if (failed.size > 0 && attempt >= 5) throw new Error(`SQS rejected ${failed.size} messages: ${out.Failed?.[0]?.Message}`);
          entries = entries.filter((e) => failed.has(e.Id));
        }
      }
    },
    async pending() {
      const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] as const;
      const { GetQueueAttributesCommand } = await sqs();
      const out = await (await client()).send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }));
      return names.reduce((sum, name) => sum + Number(out.Attributes?.[name] ?? 0), 0);
    },
  };
}

/** The trace context (`traceparent`, `tracestate`) as string message attributes: the body stays the work alone. */
function messageAttributes(carrier: Record<string, string> | undefined): Record<string, MessageAttributeValue> | undefined {
  if (!carrier) return undefined;
  return Object.fromEntries(Object.entries(carrier).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]));
}

/** The Lambda's queues: the SQS queues the stack named (a function that was given none cannot send). */
export function sqsQueuesFromConfig(): Runtime['queues'] {
  const client = loadOnce(async () => new (await sqs()).SQSClient({ region: config.region, ...(config.sqsEndpoint ? { endpoint: config.sqsEndpoint } : {}) }));
  return {
    ingestion: config.ingestionQueueUrl ? sqsQueue(client, config.ingestionQueueUrl) : unconfiguredQueue('INGESTION_QUEUE_URL'),
    workflowSteps: config.workflowQueueUrl ? sqsQueue(client, config.workflowQueueUrl) : unconfiguredQueue('WORKFLOW_QUEUE_URL'),
    webhooks: config.webhookQueueUrl ? sqsQueue(client, config.webhookQueueUrl) : unconfiguredQueue('WEBHOOK_QUEUE_URL'),
  };
}
