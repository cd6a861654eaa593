import { describe, expect, it } from 'vitest';
import { createAgentsApp } from '../functions/agents/app';
import { routesOnlyRuntime } from '../shared/configured-runtime';
import { systemClock } from '../shared/clock';
import { createStore } from '../shared/store';
import { createDb } from '../shared/store/db';
import { call } from './helpers/http';

describe('when DynamoDB cannot be reached', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, leaking nothing', async () => {
    const unreachable = { ...routesOnlyRuntime(), store: createStore(createDb({ endpoint: 'http://127.0.0.1:9' }), systemClock) };
    const res = await call(createAgentsApp(unreachable), 'GET', '/v1/agents', { key: 'cak_some_key_0123456789abcdef' });
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The data store is temporarily unavailable; retry shortly',
    });
    expect(res.headers.get('retry-after')).toBe('1');
    expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
  });
});
