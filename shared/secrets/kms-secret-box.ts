import { config } from '../config';
import { loadOnce } from '../load-once';
import { kmsKeyWrapper, kmsSdk, missingSecretBox, secretBox, type SecretBox } from './secret-box';

/** The Lambda's secret box: data keys wrapped by SECRETS_KMS_KEY_ID (set by the CDK stack). */
export function kmsSecretBoxFromConfig(): SecretBox {
  if (!config.secretsKmsKeyId) return missingSecretBox();
  const client = loadOnce(async () => new (await kmsSdk()).KMSClient({ region: config.region }));
  return secretBox(kmsKeyWrapper(client, config.secretsKmsKeyId));
}
