import type { Stack } from 'aws-cdk-lib';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/**
 * Where every alarm goes: an SNS topic, encrypted with a key CloudWatch may use (AWS's managed SNS
 * key does not let CloudWatch publish), TLS only. `cdk deploy -c alarmEmail=ops@example.com`
 * subscribes an address; anything else subscribes to the topic whose ARN the stack outputs.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const key = new Key(this, 'Key', { description: 'Cairn: encrypts the alarm topic', enableKeyRotation: true, removalPolicy: RemovalPolicy.DESTROY });
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new Topic(this, 'Topic', { displayName: 'Cairn alarms', masterKey: key, enforceSSL: true });
    const email = this.node.tryGetContext('alarmEmail') as unknown;
    if (typeof email === 'string' && email.includes('@')) this.topic.addSubscription(new EmailSubscription(email));
  }

  /** Sends every alarm of `stack` (made so far) to the topic. */
  notifyFrom(stack: Stack): void {
    const action = new SnsAction(this.topic);
    for (const construct of stack.node.findAll()) if (construct instanceof Alarm) construct.addAlarmAction(action);
  }
}
