import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';

/** API keys of model providers: from the environment, or (AWS) from one Secrets Manager secret. */
export interface ProviderKeys {
  openai?: string;
  anthropic?: string;
  cohere?: string;
}

const CACHE_MS = 5 * 60_000;

/**
 * The provider keys of this runtime: from the environment, or from PROVIDER_SECRETS_ARN read at
 * most every five minutes per instance, so a rotated key is picked up.
 */
export function providerKeysLoader(client?: SecretsManagerClient): () => Promise<ProviderKeys> {
  let cached: { keys: ProviderKeys; until: number } | undefined;
  return async () => {
    const fromEnv: ProviderKeys = { openai: config.openaiApiKey, anthropic: config.anthropicApiKey, cohere: config.cohereApiKey };
    if (!config.providerSecretsArn) return fromEnv;
    if (cached && cached.until > performance.now()) return cached.keys;
    const sm = client ?? new SecretsManagerClient({ region: config.region, ...(config.secretsManagerEndpoint ? { endpoint: config.secretsManagerEndpoint } : {}) });
    const out = await sm.send(new GetSecretValueCommand({ SecretId: config.providerSecretsArn }));
    const secret = JSON.parse(out.SecretString ?? '{}') as Record<string, string | undefined>;
    const keys = { openai: secret.OPENAI_API_KEY || fromEnv.openai, anthropic: secret.ANTHROPIC_API_KEY || fromEnv.anthropic, cohere: secret.COHERE_API_KEY || fromEnv.cohere };
    cached = { keys, until: performance.now() + CACHE_MS };
    return keys;
  };
}
