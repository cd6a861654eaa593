import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config } from '../config';
import { anthropicProvider } from './anthropic-provider';
import { bedrockProvider } from './bedrock-provider';
import { embeddingModel, reranker, type ProviderSettings } from './embeddings';
import { localEngine } from './local-engine';
import { openaiProvider } from './openai-provider';
import { providerKeysLoader, type ProviderKeys } from './provider-keys';
import type { ChatModel, ModelResolver } from './types';


/** The engine of a configured provider; undefined when the provider has no credentials here. */
function providerEngine(provider: string, keys: ProviderKeys, bedrock: () => ChatModel): ChatModel | undefined {
  switch (provider) {
    case 'local':
      return localEngine;
    case 'openai':
      return keys.openai ? openaiProvider({ baseUrl: config.openaiBaseUrl, apiKey: keys.openai }) : undefined;
    case 'anthropic':
      return keys.anthropic ? anthropicProvider({ baseUrl: config.anthropicBaseUrl, apiKey: keys.anthropic }) : undefined;
    case 'bedrock':
      if (!config.bedrockRegion) return undefined;
      return bedrock();
    default:
      return undefined;
  }
}


/**
 * Why `name` resolves to the built-in engine here: the setting that would give it a provider.
 * For callers that need a real model (an evaluation's judge) and must say what to configure.
 */
export function missingModelSetting(name: string): string {
  const slash = name.indexOf('/');
  const provider = slash < 0 ? config.defaultModelProvider : name.slice(0, slash);
  const via = slash < 0 ? ` (a bare name goes to DEFAULT_MODEL_PROVIDER, which is ${provider})` : '';
  switch (provider) {
    case 'openai':
      return `needs OpenAI credentials${via}: set OPENAI_API_KEY (in AWS, OPENAI_API_KEY in the PROVIDER_SECRETS_ARN secret)`;
    case 'anthropic':
      return `needs Anthropic credentials${via}: set ANTHROPIC_API_KEY (in AWS, ANTHROPIC_API_KEY in the PROVIDER_SECRETS_ARN secret)`;
    case 'bedrock':
      return `needs Bedrock${via}: set BEDROCK_REGION`;
    default:
      return `resolves to the built-in engine${via}, which cannot do this: name a provider's model (openai/…, anthropic/… or bedrock/…) and configure that provider, or set DEFAULT_MODEL_PROVIDER`;
  }
}

/**
 * `provider/model` as written, a bare name through DEFAULT_MODEL_PROVIDER, and — as
 * ARCHITECTURE.md fixes — any provider without credentials here falls back to the built-in engine.
 */
export function modelResolver(keys: () => Promise<ProviderKeys> = providerKeysLoader()): ModelResolver {
  let client: BedrockRuntimeClient | undefined;
  const bedrockClient = () =>
    (client ??= new BedrockRuntimeClient({
      region: config.bedrockRegion,
      // HTTP/1.1: Converse needs no HTTP/2 (the client's default, for bidirectional streams).
      requestHandler: new NodeHttpHandler(),
      ...(config.bedrockEndpoint ? { endpoint: config.bedrockEndpoint } : {}),
    }));
  let bedrockEngine: ChatModel | undefined;
  const bedrock = () => (bedrockEngine ??= bedrockProvider(bedrockClient()));
  const settings = async (): Promise<ProviderSettings> => {
    const known = await keys();
    return {
      ...(known.openai ? { openai: { baseUrl: config.openaiBaseUrl, apiKey: known.openai } } : {}),
      ...(known.cohere ? { cohere: { baseUrl: config.cohereBaseUrl, apiKey: known.cohere } } : {}),
      ...(config.bedrockRegion ? { bedrock: bedrockClient } : {}),
    };
  };
  return {
    async resolve(name) {
      const slash = name.indexOf('/');
      const provider = slash < 0 ? config.defaultModelProvider : name.slice(0, slash);
      const model = slash < 0 ? name : name.slice(slash + 1);
      const engine = providerEngine(provider, await keys(), bedrock);
      if (!engine || provider === 'local') return { name: 'local/extractive', model: 'extractive', engine: localEngine };
      return { name: `${provider}/${model}`, model, engine };
    },
    async embedding(name, dimensions) {
      return embeddingModel(name, dimensions, await settings());
    },
    async reranker(name) {
      return reranker(name, await settings());
    },
  };
}
