import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/**
 * Provider API keys from Secrets Manager (AWS), read through a stand-in of the Secrets Manager
 * endpoint answering GetSecretValue as the service does (JSON 1.1 protocol).
 */
let server: Server;
const calls: Array<{ target: string; body: Record<string, unknown> }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      calls.push({ target: String(req.headers['x-amz-target']), body: JSON.parse(raw) });
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({
        ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cairn/providers-AbCdEf',
        Name: 'cairn/providers',
        SecretString: JSON.stringify({ OPENAI_API_KEY: 'sk-from-secrets-manager', ANTHROPIC_API_KEY: '' }),
        VersionId: 'a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1795255200,
      }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('provider keys', () => {
  it('come from the Secrets Manager secret named by PROVIDER_SECRETS_ARN, read once per five minutes', async () => {
    vi.stubEnv('PROVIDER_SECRETS_ARN', 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cairn/providers-AbCdEf');
    vi.stubEnv('SECRETS_MANAGER_ENDPOINT', `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    vi.resetModules(); // config is read once per module instance: load fresh ones with this environment
    try {
      const { providerKeysLoader } = await import('../shared/models/provider-keys');
      const { modelResolver } = await import('../shared/models/resolve-model');
      const providerKeys = providerKeysLoader();
      const models = modelResolver({ keys: providerKeys });
      expect(await providerKeys()).toEqual({ openai: 'sk-from-secrets-manager', anthropic: undefined });
      expect((await models.resolve('openai/gpt-4o')).name).toBe('openai/gpt-4o');
      expect((await models.resolve('anthropic/claude')).name).toBe('local/extractive'); // empty in the secret
      expect(calls).toHaveLength(1);
      expect(calls[0]).toEqual({ target: 'secretsmanager.GetSecretValue', body: { SecretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cairn/providers-AbCdEf' } });
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
