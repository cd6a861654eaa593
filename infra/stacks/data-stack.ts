import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { MAX_RECEIVES } from '../../shared/queue/queue';
import type { Construct } from 'constructs';
import { AlarmTopic } from '../constructs/alarm-topic';
import { DataTable } from '../constructs/data-table';
import { WorkQueue } from '../constructs/work-queue';

/** Stateful resources: the table (retained) and the work queues with their dead letters. */
export class DataStack extends Stack {
  readonly data: DataTable;
  readonly workflowSteps: WorkQueue;
  readonly ingestion: WorkQueue;
  /** Completion webhook deliveries, retried with backoff by re-sending (the receiver's failures are not the queue's). */
  readonly webhooks: WorkQueue;
  /** Files' content (one object per file version) and uploads in progress (`uploads/`). */
  readonly files: Bucket;
  /** Wraps the data keys that seal stored secrets (PostgreSQL credentials). */
  readonly secretsKey: Key;
  /** API keys of model providers; fill in after deploying (see README). */
  readonly providerKeys: Secret;
  /** The credential for POST /platform/tenants (read it with `aws secretsmanager get-secret-value`). */
  readonly platformAdminToken: Secret;
  /** Signs platform access tokens; rotating it ends every issued token. */
  readonly platformTokenKey: Secret;
  /** Signs pagination cursors; rotating it ends the cursors clients hold (they list again from the start). */
  readonly cursorKey: Secret;
  /** Where every alarm of both stacks goes (here, so the dead-letter alarms can reach it too). */
  readonly alarms: AlarmTopic;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.data = new DataTable(this, 'Data');
    // Visibility at six times the worker timeout, as AWS advises for SQS event sources.
    this.workflowSteps = new WorkQueue(this, 'WorkflowSteps', { visibilityTimeout: Duration.minutes(6), maxReceiveCount: MAX_RECEIVES });
    this.ingestion = new WorkQueue(this, 'Ingestion', { visibilityTimeout: Duration.minutes(60), maxReceiveCount: MAX_RECEIVES });
    this.webhooks = new WorkQueue(this, 'WebhookDeliveries', { visibilityTimeout: Duration.minutes(3), maxReceiveCount: MAX_RECEIVES });
    this.files = new Bucket(this, 'Files', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        // An upload never completed; its record has gone with the table's TTL.
        { id: 'abandoned-uploads', prefix: 'uploads/', expiration: Duration.days(2) },
        { id: 'incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      // Browsers (a console) PUT uploads straight to their presigned URLs.
      cors: [{ allowedMethods: [HttpMethods.PUT], allowedOrigins: ['*'], allowedHeaders: ['content-type'], maxAge: 3600 }],
    });
    Validations.of(this.files).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'Only the Cairn functions’ roles and presigned URLs they sign reach this bucket; object-level access can be audited with CloudTrail data events, which the deployer may enable.',
    });
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Cairn: wraps data keys of stored source credentials',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.providerKeys = new Secret(this, 'ProviderKeys', {
      description: 'Cairn: {"OPENAI_API_KEY": "...", "ANTHROPIC_API_KEY": "..."} (leave empty for the built-in engine)',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' }),
        generateStringKey: 'unused',
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const generated = (id: string, description: string) =>
      new Secret(this, id, {
        description,
        generateSecretString: { passwordLength: 64, excludePunctuation: true },
        removalPolicy: RemovalPolicy.RETAIN,
      });
    this.platformAdminToken = generated('PlatformAdminToken', 'Cairn: the platform admin token (Authorization: Bearer … on POST /platform/tenants)');
    this.platformTokenKey = generated('PlatformTokenKey', 'Cairn: HMAC key that signs platform access tokens');
    this.cursorKey = generated('CursorKey', 'Cairn: HMAC key that signs pagination cursors');
    for (const secret of [this.platformAdminToken, this.platformTokenKey]) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason: 'Rotating these is an operator decision (a new admin token; a new signing key ends every access token); Cairn re-reads them every five minutes.',
      });
    }
    Validations.of(this.cursorKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'A new cursor key only ends the page cursors clients hold (they list again from the start); the functions get it at deployment, so rotate it with a deploy.',
    });
    Validations.of(this.providerKeys).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: "Third-party model API keys cannot be rotated by a Lambda here; rotate them at the provider and update the secret (Cairn re-reads it every five minutes).",
    });
    this.alarms = new AlarmTopic(this, 'Alarms');
    this.alarms.notifyFrom(this);
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'Subscribe to receive every alarm (or deploy with -c alarmEmail=…)' });
  }
}
