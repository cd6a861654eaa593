import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { loadOnce, onFirstUse } from '../load-once';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config, type ProviderSettings } from '../config';
import { AppError } from '../errors';
import { anthropicProvider } from './anthropic-provider';
import { bedrockProvider } from './bedrock-provider';
import { bedrockSdk } from './bedrock-sdk';
import { embeddingModel, reranker, type ProviderSettings as RetrievalSettings } from './embeddings';
import { BUILT_IN_PROVIDERS, knownProviders } from './model-name';
import { openaiProvider } from './openai-provider';
import { providerKeysLoader, type ProviderKeys } from './provider-keys';
import type { ChatModel, ModelResolver, ProviderView } from './types';

/** The built-in engine (its analyzers and word lists), loaded when a local model is first resolved. */
const localEngine = onFirstUse(async () => (await import('./local-engine')).localEngine);

/**
 * The providers of this runtime: the built-in openai, anthropic and bedrock from their own
 * variables (each only with its credentials or region), then MODEL_PROVIDERS' by name, each with
 * the provider secret's apiKey for it when it holds one.
 */
function providersOf(keys: ProviderKeys, declared: Record<string, ProviderSettings>): Record<string, ProviderSettings> {
  const providers: Record<string, ProviderSettings> = {};
  if (keys.openai) providers.openai = { type: 'openai-compatible', baseUrl: config.openaiBaseUrl, apiKey: keys.openai };
  if (keys.anthropic) providers.anthropic = { type: 'anthropic', baseUrl: config.anthropicBaseUrl, apiKey: keys.anthropic };
  if (config.bedrockRegion) providers.bedrock = { type: 'bedrock', region: config.bedrockRegion, ...(config.bedrockEndpoint ? { endpoint: config.bedrockEndpoint } : {}) };
  for (const [name, settings] of Object.entries(declared)) {
    const apiKey = keys.providers?.[name];
    providers[name] = apiKey && settings.type !== 'bedrock' ? { ...settings, apiKey } : settings;
  }
  return providers;
}

/** Whether a provider can be called here: Anthropic needs a key; an OpenAI-compatible server (vLLM, Ollama) may not, and Bedrock uses the role's. */
const usable = (settings: ProviderSettings) => settings.type !== 'anthropic' || Boolean(settings.apiKey);

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
    case 'local':
      return `resolves to the built-in engine${via}, which cannot do this: name a provider's model (openai/…, anthropic/…, bedrock/… or a provider of MODEL_PROVIDERS) and configure that provider, or set DEFAULT_MODEL_PROVIDER`;
    default:
      return `needs credentials for provider ${provider}${via}: its apiKey in MODEL_PROVIDERS (in AWS, in the PROVIDER_SECRETS_ARN secret's MODEL_PROVIDERS)`;
  }
}

/**
 * `provider/model` as written, a bare name through DEFAULT_MODEL_PROVIDER, and — as
 * ARCHITECTURE.md fixes — a provider without credentials here falls back to the built-in engine.
 * `providers` replaces MODEL_PROVIDERS' settings (tests point them at their own servers).
 */
export function modelResolver(options: { keys?: () => Promise<ProviderKeys>; providers?: Record<string, ProviderSettings> } = {}): ModelResolver {
  const keys = options.keys ?? providerKeysLoader();
  const declared = options.providers ?? config.modelProviders;
  // Clients and engines per provider, made once per instance and again only when its settings change (a rotated key).
  // The SDK's module is loaded with the first Bedrock call, not at a cold start.
  const bedrockClients = new Map<string, () => Promise<BedrockRuntimeClient>>();
  const bedrockClient = (region: string, endpoint?: string) => {
    const key = `${region} ${endpoint ?? ''}`;
    let client = bedrockClients.get(key);
    if (!client) {
      // HTTP/1.1: Converse needs no HTTP/2 (the client's default, for bidirectional streams).
      client = loadOnce(async () => new (await bedrockSdk()).BedrockRuntimeClient({ region, requestHandler: new NodeHttpHandler(), ...(endpoint ? { endpoint } : {}) }));
      bedrockClients.set(key, client);
    }
    return client;
  };
  const engines = new Map<string, { settings: string; engine: ChatModel }>();
  const engineOf = (name: string, settings: ProviderSettings): ChatModel => {
    const fingerprint = JSON.stringify(settings);
    const known = engines.get(name);
    if (known?.settings === fingerprint) return known.engine;
    const shared = { name, ...(settings.promptCaching !== undefined ? { promptCaching: settings.promptCaching } : {}) };
    const engine =
      settings.type === 'bedrock'
        ? bedrockProvider(bedrockClient(settings.region, settings.endpoint), shared)
        : settings.type === 'anthropic'
          ? anthropicProvider({ ...shared, baseUrl: settings.baseUrl, apiKey: settings.apiKey! })
          : openaiProvider({ ...shared, baseUrl: settings.baseUrl, ...(settings.apiKey ? { apiKey: settings.apiKey } : {}) });
    engines.set(name, { settings: fingerprint, engine });
    return engine;
  };
  const retrievalSettings = async (): Promise<RetrievalSettings> => {
    const known = await keys();
    return {
      ...(known.openai ? { openai: { baseUrl: config.openaiBaseUrl, apiKey: known.openai } } : {}),
      ...(known.cohere ? { cohere: { baseUrl: config.cohereBaseUrl, apiKey: known.cohere } } : {}),
      ...(config.bedrockRegion ? { bedrock: bedrockClient(config.bedrockRegion, config.bedrockEndpoint) } : {}),
    };
  };
  return {
    async resolve(name) {
      const slash = name.indexOf('/');
      const provider = slash < 0 ? config.defaultModelProvider : name.slice(0, slash);
      const model = slash < 0 ? name : name.slice(slash + 1);
      if (!knownProviders().includes(provider) && !(provider in declared)) {
        // Names are checked when agents and steps are written; one stored before its provider was removed lands here.
        throw new AppError('UNPROCESSABLE', `Model ${name} names provider ${provider}, which this deployment no longer has`, { field: 'model', model: name });
      }
      const settings = provider === 'local' ? undefined : providersOf(await keys(), declared)[provider];
      if (!settings || !usable(settings)) return { name: 'local/extractive', model: 'extractive', engine: await localEngine(), timeoutMs: config.modelTimeoutMs };
      const contextWindow = settings.contextWindows?.[model] ?? settings.contextWindow;
      return { name: `${provider}/${model}`, model, engine: engineOf(provider, settings), timeoutMs: settings.timeoutMs ?? config.modelTimeoutMs, ...(contextWindow ? { contextWindow } : {}) };
    },
    async providers() {
      const providers = providersOf(await keys(), declared);
      const views: ProviderView[] = [{ name: 'local', type: 'local', usable: true, models: ['local/extractive'] }];
      for (const name of [...new Set([...BUILT_IN_PROVIDERS.filter((p) => p !== 'local'), ...Object.keys(declared)])]) {
        const settings = providers[name];
        if (!settings) {
          views.push({ name, type: name === 'bedrock' ? 'bedrock' : name === 'anthropic' ? 'anthropic' : 'openai-compatible', usable: false, models: [] });
          continue;
        }
        views.push({
          name,
          type: settings.type,
          usable: usable(settings),
          ...(settings.type === 'bedrock' ? { region: settings.region } : { baseUrl: settings.baseUrl, hasApiKey: Boolean(settings.apiKey) }),
          timeoutMs: settings.timeoutMs ?? config.modelTimeoutMs,
          ...(settings.promptCaching !== undefined ? { promptCaching: settings.promptCaching } : {}),
          models: [...new Set([...(settings.models ?? []).map((m) => `${name}/${m}`), ...Object.keys(config.modelPrices).filter((m) => m.startsWith(`${name}/`))])],
        });
      }
      return views;
    },
    async embedding(name, dimensions) {
      return embeddingModel(name, dimensions, await retrievalSettings());
    },
    async reranker(name) {
      return reranker(name, await retrievalSettings());
    },
  };
}
