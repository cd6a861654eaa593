import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DataTable } from '../constructs/data-table';
import { WorkQueue } from '../constructs/work-queue';

/** Stateful resources: the table (retained) and the work queues with their dead letters. */
export class DataStack extends Stack {
  readonly data: DataTable;
  readonly workflowSteps: WorkQueue;
  readonly ingestion: WorkQueue;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.data = new DataTable(this, 'Data');
    // Visibility at six times the worker timeout, as AWS advises for SQS event sources.
    this.workflowSteps = new WorkQueue(this, 'WorkflowSteps', { visibilityTimeout: Duration.minutes(6) });
    this.ingestion = new WorkQueue(this, 'Ingestion', { visibilityTimeout: Duration.minutes(90) });
  }
}
