import { describe, expect, it } from 'vitest';
import { loadConfig } from '../shared/config';

describe('configuration', () => {
  it('gives each unset variable its default', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ tableName: 'cairn', searchCacheBytes: 64 * 1024 * 1024, logLevel: 'info', port: 3000, defaultModelProvider: 'local', modelPrices: {}, modelProviders: {} });
    expect(config.dynamodbEndpoint).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('parses set variables: numbers, lists and JSON', () => {
    const config = loadConfig({
      SEARCH_CACHE_MB: '8',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      MODEL_PRICES: '{"openai/gpt-4o": {"input": 0.0025, "output": 0.01}}',
      MODEL_PROVIDERS: '{"vllm": {"type": "openai-compatible", "baseUrl": "http://10.0.0.5/v1"}, "claude": {"type": "anthropic"}}',
      DEFAULT_MODEL_PROVIDER: 'vllm',
    });
    expect(config.searchCacheBytes).toBe(8 * 1024 * 1024);
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.modelPrices['openai/gpt-4o']).toEqual({ input: 0.0025, output: 0.01 });
    expect(config.modelProviders.claude).toEqual({ type: 'anthropic', baseUrl: 'https://api.anthropic.com' });
    expect(config.defaultModelProvider).toBe('vllm');
  });

  it('names every bad variable, with the path inside a JSON one', () => {
    const bad = () =>
      loadConfig({ PORT: '70000', DYNAMODB_ENDPOINT: 'not a url', LOG_LEVEL: 'loud', MODEL_PROVIDERS: '{"Bad": {"type": "bedrock", "region": "eu-west-1"}, "eu": {"type": "bedrock"}}', MODEL_PRICES: '{' });
    expect(bad).toThrow(/^Invalid configuration:/);
    const message = (() => {
      try {
        bad();
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const named of ['PORT:', 'DYNAMODB_ENDPOINT:', 'LOG_LEVEL:', 'MODEL_PROVIDERS.Bad: names must be lowercase', 'MODEL_PROVIDERS.eu.region:', 'MODEL_PRICES: must be JSON']) expect(message).toContain(named);
  });

  it('refuses a default provider nothing defines, and the built-in engine’s name for another', () => {
    expect(() => loadConfig({ DEFAULT_MODEL_PROVIDER: 'vllm' })).toThrow(/DEFAULT_MODEL_PROVIDER: vllm is neither/);
    expect(() => loadConfig({ MODEL_PROVIDERS: '{"local": {"type": "bedrock", "region": "eu-west-1"}}' })).toThrow(/MODEL_PROVIDERS\.local: local is the built-in engine/);
  });
});
