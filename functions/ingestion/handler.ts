import { handleIngestionMessage } from '../../shared/domain/ingestion';
import { sqsHandler } from '../../shared/queue/sqs-handler';

export const handler = sqsHandler(handleIngestionMessage);
