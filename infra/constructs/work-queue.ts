import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { alarmAt } from './alarm';

export interface WorkQueueProps {
  /** At least the worker's timeout, so a message is not redelivered while it is being handled. */
  visibilityTimeout: Duration;
  /** Deliveries before a message is parked in the dead-letter queue. */
  maxReceiveCount?: number;
}

/** An SQS queue with its dead-letter queue and an alarm when anything lands there. */
export class WorkQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount ?? 5 },
    });
    this.deadLetterAlarm = alarmAt(
      this,
      'DeadLettersAlarm',
      this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      `Messages in the ${id} dead-letter queue: a batch failed every retry`,
    );
  }
}
