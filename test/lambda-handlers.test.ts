import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { invokeStreaming } from './helpers/lambda-streaming';
import { parseSse } from './helpers/sse';
// The runtime stand-in must exist before the streaming handler module loads.
const { handler: agentsHandler } = await import('../functions/agents/handler');
import { handler as docsHandler } from '../functions/api-docs/handler';
import { handler as sourcesHandler } from '../functions/knowledge-sources/handler';
import { handler as platformHandler } from '../functions/platform/handler';
import { handler as workflowsHandler } from '../functions/workflows/handler';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { invoke, restEvent } from './helpers/lambda-events';
import { platformTestSecrets } from './helpers/platform';
import { newTenant } from './helpers/tenant';
import { testRt } from './helpers/runtime';

const local = createLocalApp(testRt);

/** Strips what differs between two runs of the same request (ids, times). */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        ['id', 'requestId', 'timestamp', 'createdAt', 'updatedAt', 'sha256'].includes(k) ? typeof v : shape(v),
      ]),
    );
  }
  return value;
}

describe('Lambda handlers with API Gateway REST proxy events', () => {
  it('runs the agents CRUD through the handler exactly as the local server does', async () => {
    const t = await newTenant();
    const body = { name: 'Support bot', model: 'gpt-4', temperature: 0.3, capabilities: ['chat', 'document-search'] };

    const created = await invokeStreaming(agentsHandler, restEvent('POST', '/v1/agents', { apiKey: t.apiKey, body }));
    const createdLocally = await call(local, 'POST', '/v1/agents', { key: t.apiKey, body });
    expect(created.statusCode).toBe(201);
    expect(shape(created.json)).toEqual(shape(createdLocally.body));
    expect(Object.keys(created.headers)).toEqual(
      expect.arrayContaining(['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'location']),
    );
    const id = created.json.data.id;

    const got = await invokeStreaming(agentsHandler, restEvent('GET', `/v1/agents/${id}`, { apiKey: t.apiKey }));
    expect(got.statusCode).toBe(200);
    expect(got.json.data).toEqual(created.json.data);

    const page = await invokeStreaming(agentsHandler, restEvent('GET', '/v1/agents?limit=1', { apiKey: t.apiKey }));
    expect(page.json.meta.pagination).toMatchObject({ limit: 1, hasMore: true });

    const put = await invokeStreaming(agentsHandler, restEvent('PUT', `/v1/agents/${id}`, { apiKey: t.apiKey, body: { ...body, name: 'Renamed' } }));
    expect(put.json.data).toMatchObject({ name: 'Renamed', version: 2 });

    const del = await invokeStreaming(agentsHandler, restEvent('DELETE', `/v1/agents/${id}`, { apiKey: t.apiKey }));
    expect(del.json.data).toEqual({ id, deleted: true });
  });

  it('gives the same errors as the local server', async () => {
    const t = await newTenant();
    const cases: Array<[string, string, { apiKey?: string; body?: unknown }]> = [
      ['GET', '/v1/agents', {}],
      ['POST', '/v1/agents', { apiKey: t.apiKey, body: { name: 'x', model: 'gpt-4', temperature: 9 } }],
      ['GET', '/v1/agents/agt_01m7y62dvspbq7k3p58zfb7w0n', { apiKey: t.apiKey }],
    ];
    for (const [method, path, options] of cases) {
      const lambda = await invokeStreaming(agentsHandler, restEvent(method, path, options));
      const viaLocal = await call(local, method, path, { key: options.apiKey, body: options.body });
      expect(lambda.statusCode, `${method} ${path}`).toBe(viaLocal.status);
      expect(shape(lambda.json)).toEqual(shape(viaLocal.body));
    }
  });

  it('serves knowledge sources and workflows from their own handlers', async () => {
    const t = await newTenant();
    const ks = await invoke(
      sourcesHandler,
      restEvent('POST', '/v1/knowledge-sources', {
        apiKey: t.apiKey,
        body: { name: 'kb', type: 'file-collection', files: [{ path: 'a.md', content: '# A' }] },
      }),
    );
    expect(ks.statusCode).toBe(201);
    const withContent = await invoke(sourcesHandler, restEvent('GET', `/v1/knowledge-sources/${ks.json.data.id}?include=content`, { apiKey: t.apiKey }));
    expect(withContent.json.data.files[0].content).toBe('# A');
    // A multipart upload arrives base64-encoded (the API's binary media type), bytes intact.
    const form = new Response(
      (() => {
        const f = new FormData();
        f.append('file', new Blob([Buffer.from([0x25, 0x50, 0x44, 0x46, 0xff, 0x00, 0x80])], { type: 'application/pdf' }), 'docs/raw.pdf');
        return f;
      })(),
    );
    const multipartBody = Buffer.from(await form.arrayBuffer());
    const uploaded = await invoke(sourcesHandler, {
      ...restEvent('POST', `/v1/knowledge-sources/${ks.json.data.id}/files`, { apiKey: t.apiKey, headers: { 'content-type': form.headers.get('content-type')! } }),
      body: multipartBody.toString('base64'),
      isBase64Encoded: true,
    });
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    expect(uploaded.json.data.files.find((f: { path: string }) => f.path === 'docs/raw.pdf')).toMatchObject({ size: 7, contentType: 'application/pdf', sha256: createHash('sha256').update(Buffer.from([0x25, 0x50, 0x44, 0x46, 0xff, 0x00, 0x80])).digest('hex') });
    const wf = await invokeStreaming(
      workflowsHandler,
      restEvent('POST', '/v1/workflows', {
        apiKey: t.apiKey,
        body: { name: 'w', steps: [{ type: 'search', knowledgeSourceId: ks.json.data.id, query: '{{input}}' }] },
      }),
    );
    expect(wf.statusCode).toBe(201);
    expect(wf.json.data.steps[0].config.knowledgeSourceId).toBe(ks.json.data.id);
    // Execution events stream through Lambda response streaming: a finished execution's snapshot and end.
    // (Executed locally: the handler's own queue is SQS, which this test does not start.)
    const local = createLocalApp(testRt);
    const shape = await call(local, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'shape', steps: [{ type: 'transform', expression: '$uppercase(input)' }] } });
    const exe = await call(local, 'POST', `/v1/workflows/${shape.body.data.id}/execute`, { key: t.apiKey, body: { input: 'a' } });
    expect(exe.body.data).toMatchObject({ status: 'succeeded', output: 'A' });
    const events = await invokeStreaming(workflowsHandler, restEvent('GET', `/v1/workflows/${shape.body.data.id}/executions/${exe.body.data.id}/events`, { apiKey: t.apiKey }));
    expect(events.statusCode).toBe(200);
    expect(events.headers['content-type']).toContain('text/event-stream');
    expect(parseSse(events.body).map((e) => e.event)).toEqual(['snapshot']);
    // A group's handler does not answer for another group's paths.
    const wrong = await invokeStreaming(workflowsHandler, restEvent('GET', '/v1/agents', { apiKey: t.apiKey }));
    expect(wrong.statusCode).toBe(404);
  });

  it('provisions a tenant and serves its platform calls through the platform handler', async () => {
    const secrets = platformTestSecrets();
    const created = await invoke(
      platformHandler,
      restEvent('POST', '/platform/tenants', { headers: { Authorization: `Bearer ${secrets.adminToken}` }, body: { name: 'Lambda tenant' } }),
    );
    expect(created.statusCode).toBe(201);
    const bearer = { Authorization: `Bearer ${created.json.data.accessToken}` };
    const session = await invoke(platformHandler, restEvent('GET', '/platform/login/session', { headers: bearer }));
    expect(session.json.data.tenantId).toBe(created.json.data.tenant.id);
    const agent = await invoke(platformHandler, restEvent('POST', '/platform/agent', { headers: bearer, body: { name: 'From Lambda', model: 'local/x' } }));
    expect(agent.statusCode).toBe(201);
    const viaPublic = await invokeStreaming(agentsHandler, restEvent('GET', `/v1/agents/${agent.json.data.id}`, { apiKey: created.json.data.apiKey }));
    expect(viaPublic.json.data.name).toBe('From Lambda');
    const mismatch = await invoke(platformHandler, restEvent('GET', '/platform/agent', { headers: { ...bearer, 'X-Tenant-Id': 'someone-else' } }));
    expect(mismatch.statusCode).toBe(403);
  });

  it('streams a conversation as server-sent events through the streaming handler', async () => {
    const t = await newTenant();
    const agent = await invokeStreaming(agentsHandler, restEvent('POST', '/v1/agents', { apiKey: t.apiKey, body: { name: 'Greeter', model: 'gpt-4' } }));
    const res = await invokeStreaming(
      agentsHandler,
      restEvent('POST', `/v1/agents/${agent.json.data.id}/converse`, { apiKey: t.apiKey, body: { message: 'Hello!', stream: true } }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    const events = [...res.body.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe('start');
    expect(events).toContain('delta');
    expect(events[events.length - 1]).toBe('done');
    expect(res.body).toContain("Hello! I'm Greeter.");
  });

  it('serves the OpenAPI document without a key', async () => {
    const doc = await invoke(docsHandler, restEvent('GET', '/v1/openapi.json'));
    expect(doc.statusCode).toBe(200);
    expect(doc.json.openapi).toBe('3.1.0');
  });
});
