import { describe, expect, it } from 'vitest';
import { createAgentsApp } from '../functions/agents/app';
import { useDynamoEndpoint } from '../shared/store/client';
import { call } from './helpers/http';

// This file's module registry is its own: pointing its store at a dead port affects no other test.
describe('when DynamoDB cannot be reached', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, leaking nothing', async () => {
    useDynamoEndpoint('http://127.0.0.1:9');
    const res = await call(createAgentsApp(), 'GET', '/v1/agents', { key: 'cak_some_key_0123456789abcdef' });
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: 'The data store is temporarily unavailable; retry shortly',
    });
    expect(res.headers.get('retry-after')).toBe('1');
    expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
  });
});
