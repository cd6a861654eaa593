import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { MAX_RECEIVES } from '../../shared/queue/queue';
import type { Construct } from 'constructs';
import { DataTable } from '../constructs/data-table';
import { WorkQueue } from '../constructs/work-queue';

/** Stateful resources: the table (retained) and the work queues with their dead letters. */
export class DataStack extends Stack {
  readonly data: DataTable;
  readonly workflowSteps: WorkQueue;
  readonly ingestion: WorkQueue;
  /** Wraps the data keys that seal stored secrets (PostgreSQL credentials). */
  readonly secretsKey: Key;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.data = new DataTable(this, 'Data');
    // Visibility at six times the worker timeout, as AWS advises for SQS event sources.
    this.workflowSteps = new WorkQueue(this, 'WorkflowSteps', { visibilityTimeout: Duration.minutes(6), maxReceiveCount: MAX_RECEIVES });
    this.ingestion = new WorkQueue(this, 'Ingestion', { visibilityTimeout: Duration.minutes(30), maxReceiveCount: MAX_RECEIVES });
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Cairn: wraps data keys of stored source credentials',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
