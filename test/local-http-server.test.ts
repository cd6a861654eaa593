import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '../local/http-server';
import { createLocalApp } from '../local/local-app';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/** Requests over one kept-alive connection, as browsers and HTTP client pools send them. */
function send(agent: Agent, port: number, method: string, path: string, key: string, body?: Buffer) {
  return new Promise<{ status: number; socket: unknown; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}) } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, socket: req.socket, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the local server over real connections', () => {
  let server: ServerType;
  let port: number;
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant();
    server = await startHttpServer(createLocalApp(testRt).fetch, { port: 0, hostname: '127.0.0.1', clock: testRt.clock });
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers the next request on the same connection after refusing a body as too large', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const big = Buffer.from(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }));
    const refused = await send(agent, port, 'POST', '/v1/agents', t.apiKey, big);
    expect(refused.status).toBe(413);
    const next = await send(agent, port, 'GET', '/v1/agents', t.apiKey);
    expect(next.status).toBe(200);
    agent.destroy();
  });

  it('sends a section’s JSON answer with its length and the headers the group’s middleware set before and after the route', async () => {
    const { headers, text } = await new Promise<{ headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/v1/agents?limit=1', headers: { 'x-api-key': t.apiKey } }, (res) => {
        let out = '';
        res.on('data', (chunk: Buffer) => (out += chunk.toString()));
        res.on('end', () => resolve({ headers: res.headers, text: out }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(headers['transfer-encoding']).toBeUndefined();
    expect(headers['content-length']).toBe(String(Buffer.byteLength(text)));
    expect(headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(headers['x-request-id']).toBe((JSON.parse(text) as { meta: { requestId: string } }).meta.requestId);
  });

  it('answers requests Node’s parser refuses with the API’s error body, not a bare 400', async () => {
    for (const raw of ['FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /v1/agents\xff HTTP/1.1\r\nHost: x\r\n\r\n']) {
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(Buffer.from(raw, 'latin1')));
        let out = '';
        socket.on('data', (chunk: Buffer) => (out += chunk.toString()));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
      expect(text.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string }; meta: { requestId: string } };
      expect(body.error.code).toBe('INVALID_REQUEST');
      expect(text).toContain(`X-Request-Id: ${body.meta.requestId}`);
    }
  });

  it('answers a Host header no URL can be made of, and headers over 16 KB, with the API’s error body and a request id', async () => {
    const rawAnswer = (raw: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(raw));
        let out = '';
        socket.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          // The answer is complete once its body (Content-Length bytes) is in.
          const head = out.indexOf('\r\n\r\n');
          const length = Number(/content-length: (\d+)/i.exec(out)?.[1] ?? NaN);
          if (head >= 0 && Buffer.byteLength(out.slice(head + 4)) >= length) socket.destroy();
        });
        socket.on('close', () => resolve(out));
        socket.on('error', reject);
      });
    const badHost = (path: string) => `GET ${path} HTTP/1.1\r\nHost: evil.example:80@127.0.0.1\r\n\r\n`;
    const bigHeaders = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`;
    for (const [request, status, code] of [[badHost, 400, 'INVALID_REQUEST'], [bigHeaders, 431, 'PAYLOAD_TOO_LARGE']] as const) {
      const text = await rawAnswer(request('/v1/agents'));
      expect(text.split('\r\n')[0], code).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string }; meta: { requestId: string } };
      expect(body.error.code).toBe(code);
      expect(text.toLowerCase()).toContain(`x-request-id: ${body.meta.requestId}`);
      // Under the OpenAI-compatible paths, OpenAI's error shape, as every other answer there.
      const openAi = await rawAnswer(request('/v1/chat/completions'));
      expect(openAi.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(JSON.parse(openAi.slice(openAi.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { type: 'invalid_request_error', code: code.toLowerCase() } });
      expect(openAi.toLowerCase()).toMatch(/x-request-id: req_/);
    }
  });
});
