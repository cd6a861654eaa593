import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { errorFields, log } from '../log';
import { deliver, MAX_RECEIVES, type Consumer } from './queue';

/**
 * An SQS-triggered Lambda handler over a consumer: each record is handled on its own and only
 * the failed ones are reported (`batchItemFailures`), so SQS redelivers just those. Each runs in
 * the trace its sender named in the message attributes, so queued work joins the request's trace.
 */
export function sqsHandler<M>(consumer: Consumer<M>) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        const delivery = { receiveCount: Number(record.attributes.ApproximateReceiveCount ?? 1), maxReceives: MAX_RECEIVES };
        await deliver(consumer, record.body, delivery, { messageId: record.messageId, carrier: carrierOf(record) });
      } catch (error) {
        log.error('message failed', { messageId: record.messageId, receiveCount: record.attributes.ApproximateReceiveCount, ...errorFields(error) });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
}

/** The string message attributes of a record (Lambda's event shape: `{ stringValue, dataType }`). */
function carrierOf(record: SQSRecord): Record<string, string> | undefined {
  const entries = Object.entries(record.messageAttributes ?? {}).flatMap(([name, value]) => (value.stringValue !== undefined ? [[name, value.stringValue] as const] : []));
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}
