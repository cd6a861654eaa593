import { readFileSync } from 'node:fs';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

const template = (JSON.parse(readFileSync(new URL('../fixtures/events/sqs-event.json', import.meta.url), 'utf8')) as SQSEvent).Records[0]!;

/** An SQS event record as Lambda's event source mapping builds it from a received message. */
export function recordOf(message: Pick<Message, 'MessageId' | 'ReceiptHandle' | 'Body' | 'Attributes' | 'MessageAttributes'>, receiveCount?: number): SQSRecord {
  return {
    ...template,
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, { dataType: value.DataType!, stringValue: value.StringValue, stringListValues: [], binaryListValues: [] }]),
    ),
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body!,
    attributes: { ...template.attributes, ...message.Attributes, ApproximateReceiveCount: String(receiveCount ?? message.Attributes?.ApproximateReceiveCount ?? 1) },
  };
}

type Handler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * What the Lambda event source mapping does: receive a batch, invoke the handler, delete the
 * records it did not report as failed (failed ones come back after the visibility timeout).
 */
export async function pollOnce(client: SQSClient, queueUrl: string, handler: Handler, maxMessages = 10): Promise<{ received: number; failed: number }> {
  const out = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: maxMessages, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }));
  const messages = out.Messages ?? [];
  if (messages.length === 0) return { received: 0, failed: 0 };
  const result = await handler({ Records: messages.map((m) => recordOf(m)) });
  const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
  const done = messages.filter((m) => !failed.has(m.MessageId!));
  if (done.length > 0) {
    await client.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
  return { received: messages.length, failed: failed.size };
}
