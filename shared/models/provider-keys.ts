import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config';
import { secretStringReader } from '../secrets/secrets-manager';

/** API keys of model providers: from the environment, or (AWS) from one Secrets Manager secret. */
export interface ProviderKeys {
  openai?: string;
  anthropic?: string;
  cohere?: string;
  /** API keys of MODEL_PROVIDERS' providers, by name (the secret's MODEL_PROVIDERS: {"vllm": {"apiKey": "…"}}). */
  providers?: Record<string, string>;
}

/** The secret's MODEL_PROVIDERS (a JSON object, or a string of one): each provider's apiKey. */
function providerKeysOf(value: unknown): Record<string, string> | undefined {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error('The provider secret’s MODEL_PROVIDERS is not JSON');
    }
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const keys: Record<string, string> = {};
  for (const [name, settings] of Object.entries(parsed as Record<string, unknown>)) {
    const apiKey = (settings as { apiKey?: unknown } | null)?.apiKey;
    if (typeof apiKey === 'string' && apiKey) keys[name] = apiKey;
  }
  return keys;
}

const CACHE_MS = 5 * 60_000;

/**
 * The provider keys of this runtime: from the environment, or from PROVIDER_SECRETS_ARN read at
 * most every five minutes per instance, so a rotated key is picked up.
 */
export function providerKeysLoader(client?: SecretsManagerClient): () => Promise<ProviderKeys> {
  let cached: { keys: ProviderKeys; until: number } | undefined;
  const secretString = secretStringReader(client);
  return async () => {
    const fromEnv: ProviderKeys = { openai: config.openaiApiKey, anthropic: config.anthropicApiKey, cohere: config.cohereApiKey };
    if (!config.providerSecretsArn) return fromEnv;
    if (cached && cached.until > performance.now()) return cached.keys;
    const secret = JSON.parse((await secretString(config.providerSecretsArn)) ?? '{}') as Record<string, unknown>;
    const text = (name: string) => (typeof secret[name] === 'string' && secret[name] ? secret[name] : undefined);
    const providers = providerKeysOf(secret.MODEL_PROVIDERS);
    const keys = { openai: text('OPENAI_API_KEY') ?? fromEnv.openai, anthropic: text('ANTHROPIC_API_KEY') ?? fromEnv.anthropic, cohere: text('COHERE_API_KEY') ?? fromEnv.cohere, ...(providers ? { providers } : {}) };
    cached = { keys, until: performance.now() + CACHE_MS };
    return keys;
  };
}
