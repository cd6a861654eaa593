import { KMSClient } from '@aws-sdk/client-kms';
import { config } from '../config';
import { kmsKeyWrapper, missingSecretBox, secretBox, type SecretBox } from './secret-box';

/** The Lambda's secret box: data keys wrapped by SECRETS_KMS_KEY_ID (set by the CDK stack). */
export function kmsSecretBoxFromConfig(): SecretBox {
  if (!config.secretsKmsKeyId) return missingSecretBox();
  return secretBox(kmsKeyWrapper(new KMSClient({ region: config.region }), config.secretsKmsKeyId));
}
