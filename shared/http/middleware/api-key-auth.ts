import type { MiddlewareHandler } from 'hono';
import { BoundedCache } from '../../bounded-cache';
import { config } from '../../config';
import { AppError } from '../../errors';
import { addLogContext } from '../../log';
import type { Runtime } from '../../runtime';
import { API_KEY_PATTERN, hashApiKey, type ApiKeyIdentity } from '../../store/api-keys';
import { bearerOf } from '../bearer';
import type { AppEnv } from '../context';

/**
 * Resolves `X-API-Key` to tenant scope and plan. In AWS, API Gateway has already checked the key
 * against its usage plans; the app still resolves it so local mode and Lambda behave alike.
 * Each app instance keeps resolved keys for `API_KEY_CACHE_SECONDS` (one DynamoDB read saved per
 * request); revocation therefore takes effect within that time.
 */
/** What a request without a key is told: both ways of sending one. */
export const MISSING_KEY = 'Missing API key: send it as X-API-Key: <key> or Authorization: Bearer <key>';

export function apiKeyAuth(rt: Runtime, options: { cacheSeconds?: number } = {}): MiddlewareHandler<AppEnv> {
  const ttlMs = (options.cacheSeconds ?? config.apiKeyCacheSeconds) * 1000;
  // Bounded: a flood of distinct keys costs memory up to the bound, then only reads.
  const cache = new BoundedCache<ApiKeyIdentity>(rt.clock, 10_000, ttlMs);
  return async (c, next) => {
    // `Authorization: Bearer <key>` too, so OpenAI-style clients can send a Cairn key.
    const apiKey = c.req.header('x-api-key') ?? bearerOf(c.req.header('authorization'));
    if (!apiKey) throw new AppError('UNAUTHORIZED', MISSING_KEY);
    if (!API_KEY_PATTERN.test(apiKey)) throw new AppError('UNAUTHORIZED', 'Unknown or revoked API key');
    const hash = hashApiKey(apiKey);
    let identity = cache.get(hash);
    if (!identity) {
      identity = await rt.store.apiKeys.resolveApiKey(apiKey);
      if (!identity) throw new AppError('UNAUTHORIZED', 'Unknown or revoked API key');
      if (ttlMs > 0) cache.set(hash, identity);
    }
    c.set('identity', identity);
    addLogContext({ tenantId: identity.scope.tenantId, keyId: identity.keyId });
    await next();
  };
}
