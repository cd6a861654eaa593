import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

/**
 * Each test file configures its process as a deployment is configured: through the environment,
 * read once by shared/config.ts. So the Lambda handlers a test imports build their runtime from the
 * same DynamoDB Local and platform secrets as the test's own runtime (test/helpers/runtime.ts).
 */
process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
process.env.S3_ENDPOINT = inject('s3Endpoint');
process.env.BLOB_BUCKET = 'cairn-test';
process.env.S3_SOURCE_BUCKETS = 'cairn-test-documents';
process.env.PLATFORM_ADMIN_TOKEN = `cpa_${randomBytes(24).toString('base64url')}`;
process.env.PLATFORM_TOKEN_KEY = randomBytes(48).toString('base64url');
process.env.CURSOR_SIGNING_KEY = randomBytes(48).toString('base64url');
// Tools in tests call servers the tests start on this machine, by the name localhost; 127.0.0.1
// and every other private address stay refused, as in a deployment.
process.env.TOOL_ALLOWED_HOSTS = 'localhost';
// One browser origin allowed, as an operator would configure a console's.
process.env.CORS_ORIGINS = 'https://console.example';
// Prices for usage reports' cost estimates (USD per 1,000 tokens).
process.env.MODEL_PRICES = JSON.stringify({ 'openai/gpt-4o': { input: 0.0025, output: 0.01 }, 'wire-claude/claude-test': { input: 0.003, output: 0.015, cachedInput: 0.0003, cacheWrite: 0.00375 } });
// Completion webhooks retry after 1 s, 2 s, …: tests see retries without waiting minutes.
process.env.WEBHOOK_RETRY_BASE_SECONDS = '1';
// Named model providers, as a deployment declares them: model names that lead with these pass
// validation; tests that call them point a runtime's resolver at their own stand-in servers.
process.env.MODEL_PROVIDERS = JSON.stringify({
  wire: { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
  'wire-claude': { type: 'anthropic', baseUrl: 'http://127.0.0.1:9' },
  'wire-down': { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' },
});
