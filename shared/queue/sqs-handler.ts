import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { errorFields, log } from '../log';
import { MAX_RECEIVES, type Consumer } from './queue';

/**
 * An SQS-triggered Lambda handler over a consumer: each record is handled on its own and only
 * the failed ones are reported (`batchItemFailures`), so SQS redelivers just those.
 */
export function sqsHandler<M>(consumer: Consumer<M>) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        const message = JSON.parse(record.body) as M;
        await consumer(message, { receiveCount: Number(record.attributes.ApproximateReceiveCount ?? 1), maxReceives: MAX_RECEIVES });
      } catch (error) {
        log.error('message failed', { messageId: record.messageId, receiveCount: record.attributes.ApproximateReceiveCount, ...errorFields(error) });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
}
