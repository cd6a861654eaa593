import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED } from '../functions/api-docs/generate';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);

describe('OpenAPI document and reference page', () => {
  it('ships both current documents and the client types generated from them (npm run openapi writes them)', async () => {
    for (const { file, text } of GENERATED) expect(readFileSync(file, 'utf8'), file).toBe(await text());
  });

  it('documents every CRUD route of the public API with the API key scheme', async () => {
    const res = await call(app, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const [group, param] of [['agents', 'agentId'], ['knowledge-sources', 'knowledgeSourceId'], ['workflows', 'workflowId']]) {
      expect(routes).toEqual(
        expect.arrayContaining([
          `GET /v1/${group}`,
          `POST /v1/${group}`,
          `GET /v1/${group}/{${param}}`,
          `PUT /v1/${group}/{${param}}`,
          `DELETE /v1/${group}/{${param}}`,
        ]),
      );
    }
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('documents the statuses the review saw returned undocumented', async () => {
    const v1 = (await call(app, 'GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const platform = (await call(app, 'GET', '/platform/openapi.json')).body as typeof v1;
    for (const path of ['/v1/agents', '/v1/workflows', '/v1/knowledge-sources']) expect(Object.keys(v1.paths[path]!.post!.responses), path).toContain('409');
    expect(Object.keys(platform.paths['/platform/tenants/{tenantId}/tokens/{tokenId}']!.delete!.responses)).toContain('404');
    expect(Object.keys(platform.paths['/platform/tenants']!.get!.responses)).toContain('400');
    // Headers over 16 KB are refused by the server before any route: every route with errors documents it.
    for (const doc of [v1, platform]) {
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) if ('400' in op.responses) expect(Object.keys(op.responses), `${method} ${path}`).toContain('431');
      }
    }
  });

  it('names local mode as a server beside a deployment, so a client generated from it knows its base URL here too', async () => {
    for (const path of ['/v1/openapi.json', '/platform/openapi.json']) {
      const { body: doc } = await call(app, 'GET', path);
      const servers = doc.servers as Array<{ url: string; variables?: Record<string, { default: string }> }>;
      expect(servers.map((s) => s.url), path).toEqual(['https://{restApiId}.execute-api.{region}.amazonaws.com/prod', 'http://localhost:{port}']);
      expect(servers[1]!.variables?.port?.default).toBe('3000');
    }
  });

  it('derives constraints from the same zod schemas that validate requests', async () => {
    const { body: doc } = await call(app, 'GET', '/v1/openapi.json');
    const input = doc.components.schemas.AgentInput;
    expect(input.required).toEqual(expect.arrayContaining(['name', 'model']));
    expect(input.properties.temperature).toMatchObject({ minimum: 0, maximum: 2, default: 0.7 });
    expect(input.properties.maxTokens).toMatchObject({ minimum: 1, maximum: 200000 });
    expect(input.additionalProperties).toBe(false);
  });

  it('serves the reference page and its assets locally', async () => {
    const page = await call(app, 'GET', '/v1/docs');
    expect(page.status).toBe(200);
    expect(page.body).toContain('/v1/docs/swagger-ui-bundle.js');
    const css = await app.request('http://localhost/v1/docs/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
    expect((await call(app, 'GET', '/v1/docs/../../etc/passwd')).status).toBe(404);
    expect((await call(app, 'GET', '/v1/docs/package.json')).status).toBe(404);
  });
});
