import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';
import { loadOnce } from '../load-once';

/** The SDK's Secrets Manager module, loaded with the first secret read, not at a cold start (most never read one). */
const sdk = loadOnce(() => import('@aws-sdk/client-secrets-manager'));

/**
 * Reads a Secrets Manager secret's string by ARN (undefined when it holds none): through `client`, or
 * a client of this deployment's region and endpoint, made on the first read and kept.
 */
export function secretStringReader(client?: SecretsManagerClient): (arn: string) => Promise<string | undefined> {
  const made = loadOnce(async () => client ?? new (await sdk()).SecretsManagerClient({ region: config.region, ...(config.secretsManagerEndpoint ? { endpoint: config.secretsManagerEndpoint } : {}) }));
  return async (arn) => {
    const { GetSecretValueCommand } = await sdk();
    return (await (await made()).send(new GetSecretValueCommand({ SecretId: arn }))).SecretString;
  };
}
