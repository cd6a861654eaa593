import { config } from '../config';

/**
 * What bounds a knowledge source, apart from its request schemas (source-schema.ts): the ingestion
 * worker checks these without building the schemas of the API it does not serve.
 */
export const SOURCE_TYPES = ['postgresql', 'file-collection', 's3', 'web'] as const;
export const SOURCE_STATUSES = ['created', 'pending', 'syncing', 'indexing', 'ready', 'failed'] as const;

/** A file-collection create or file upload carries at most this much content (bytes, decoded); larger files go through uploads. */
export const MAX_CONTENT_BYTES = 5 * 1024 * 1024;
/** The largest file an upload may bring. */
export const MAX_FILE_BYTES = 100 * 1024 * 1024;

/** Server-computed fields of a source beside every record's: sent back by a client, they are ignored. */
export const SOURCE_READ_ONLY_EXTRA = ['stats', 'error', 'fileCount', 'totalBytes', 'crawl'] as const;

/** Why a bucket may not be read by `s3` sources, or undefined when this deployment was granted it. */
export function bucketRefusal(bucket: string): string | undefined {
  if (config.s3SourceBuckets.includes(bucket)) return undefined;
  const granted = config.s3SourceBuckets.length ? `granted: ${config.s3SourceBuckets.join(', ')}` : 'none is granted';
  return `is not a bucket this deployment may read (${granted}); the deployer lists it in the CDK context s3SourceBuckets (S3_SOURCE_BUCKETS)`;
}
