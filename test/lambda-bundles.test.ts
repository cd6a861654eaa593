import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { BUNDLE_EXTERNALS, bundleFunction } from '../infra/constructs/function-bundle';
import { invoke, restEvent } from './helpers/lambda-events';
import { recordOf } from './helpers/sqs';
import { invokeStreaming } from './helpers/lambda-streaming';
import { newTenant } from './helpers/tenant';
import { makeDocx, makeDocxBomb, makePdf, makePptx, makeXlsx } from './helpers/documents';
import type * as isolatedModule from '../shared/knowledge/documents/parse-isolated';
import type { parseDocument as parseDocumentType } from '../shared/knowledge/documents/parse-document';

/**
 * The code Lambda runs is the esbuild bundle, not the sources: bundle each handler as the CDK app
 * does, import the bundle, and invoke it with API Gateway events.
 */
const out = mkdtempSync(join(tmpdir(), 'cairn-bundles-'));

/**
 * The code as CDK ships it: the AWS SDK left to the runtime (the bundles built here keep it, to
 * run outside Lambda). `text` is all of it; `startText` what a cold start reads.
 */
function shipped(group: string): { bytes: number; text: string; startText: string } {
  const dir = join(out, `${group}-shipped`);
  const files = bundleFunction(`functions/${group}/handler.ts`, dir, { external: BUNDLE_EXTERNALS });
  const textOf = (list: typeof files) => list.map((f) => readFileSync(join(dir, f.path), 'utf8')).join('\n');
  return { bytes: files.reduce((total, f) => total + f.bytes, 0), text: textOf(files), startText: textOf(files.filter((f) => f.atStart)) };
}
/** The AWS SDK packages a bundle imports as it loads (its `import(...)`s on first use are not these). */
const sdkLoadedAtStart = (text: string) => [...new Set([...text.matchAll(/\bfrom\s*"(@aws-sdk\/[^"]+)"/g)].map((m) => m[1]!))].sort();

function bundle(group: string, entry = `functions/${group}/handler.ts`): string {
  bundleFunction(entry, join(out, group), { sourcemap: true });
  return join(out, group, 'index.mjs');
}

describe('Lambda bundles', () => {
  beforeAll(() => {
    // A bundle has its own copy of config and store, read from the environment as in Lambda.
    process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
  });

  it('bundles the agents handler into small ESM files that serve the API', async () => {
    const file = bundle('agents');
    // Under 1.35 MB (issue 34's 1 MB, raised to 1.1 on 2026-11-28 when background runs came, to
    // 1.3 when A2A came: the official A2A SDK's JSON-RPC transport, client and types, ~190 KB, and
    // to 1.4 when end users came: jose's JWT verification and remote JWKS, ~25 KB, and their OAuth
    // connections (providers, the code flow, the token vault), ~25 KB,
    // each loaded on first use — the total counts code loaded on first use, while what a cold
    // start reads is budgeted apart, in bench/results/lambda.json's importInstructionsM and
    // coldImportVsHello): zod (190 KB; its
    // locales are left out, infra/bundling/zod), the MCP SDK's client with @cfworker/json-schema
    // (not Ajv, infra/bundling/ajv), the agents group's own code (~130 KB: versions and aliases
    // with fast-json-patch, evaluations, guardrails), JSONata (81 KB) for tool policies, and model
    // chains, USD budgets and the built-in engine (85 KB). The AWS SDK is the runtime's.
    const agents = shipped('agents');
    expect(agents.bytes).toBeLessThan(1_400_000);
    // No AWS SDK client is loaded at a cold start (126 ms instead of 214 in bench/lambda.ts): the
    // store speaks to DynamoDB itself, and SQS, KMS, Secrets Manager and Bedrock load on first use.
    expect(sdkLoadedAtStart(agents.startText)).toEqual(['@aws-sdk/util-dynamodb']);
    // No zod locale but English (the bundle escapes é as \xE9), and zod's messages still read (a bad body names its field).
    expect(agents.text).toContain('Invalid input');
    expect(agents.text).not.toMatch(/Entr(é|\\xE9)e invalide/);
    // No Ajv (its "NOT SUPPORTED: keyword" message is in every build of it).
    expect(agents.text).not.toContain('NOT SUPPORTED');
    const { handler } = (await import(pathToFileURL(file).href)) as { handler: unknown };
    const t = await newTenant();
    const refused = await invokeStreaming(handler, restEvent('POST', '/v1/agents', { apiKey: t.apiKey, body: { name: 'No model', model: 42 } }));
    expect(refused.statusCode).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'model', reason: 'must be a string' } });
    const created = await invokeStreaming(handler, restEvent('POST', '/v1/agents', { apiKey: t.apiKey, body: { name: 'From the bundle', model: 'gpt-4' } }));
    expect(created.statusCode).toBe(201);
    expect(created.json.data.id).toMatch(/^agt_/);
    const listed = await invokeStreaming(handler, restEvent('GET', '/v1/agents', { apiKey: t.apiKey }));
    expect(listed.json.data.map((a: { name: string }) => a.name)).toEqual(['From the bundle']);
    // A2A from the bundle: the card without a key (behind API Gateway its URLs carry the stage), a JSON-RPC call with one.
    const published = await invokeStreaming(handler, restEvent('POST', '/v1/agents', { apiKey: t.apiKey, body: { name: 'Published', model: 'local/extractive', a2a: { enabled: true } } }));
    const agentId = published.json.data.id as string;
    const card = await invokeStreaming(handler, restEvent('GET', `/a2a/${agentId}/.well-known/agent-card.json`));
    expect(card.statusCode).toBe(200);
    expect(card.json).toMatchObject({ name: 'Published', capabilities: { streaming: true, pushNotifications: true } });
    expect(card.json.supportedInterfaces[0].url).toMatch(new RegExp(`^https://[^/]+/[^/]+/a2a/${agentId}$`));
    const sent = await invokeStreaming(handler, restEvent('POST', `/a2a/${agentId}`, { apiKey: t.apiKey, body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'run_01jd8x2k3m4n5p6q7r8s9t0v1w' } } }));
    expect(sent.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32001 } });
  }, 60_000);

  it('ships every function but ingestion in under 1.4 MB, code it can load only (the limits bench/lambda.ts records)', () => {
    const { targets } = JSON.parse(readFileSync('bench/results/lambda.json', 'utf8')) as { targets: { bytes: number; except: string[] } };
    const groups = readdirSync('functions', { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join('functions', d.name, 'handler.ts')) && !targets.except.includes(d.name))
      .map((d) => d.name);
    expect(groups.length).toBeGreaterThanOrEqual(9);
    for (const group of groups) expect(shipped(group).bytes, group).toBeLessThan(targets.bytes);
  }, 120_000);

  it('bundles the MCP handler, which answers an MCP initialize and tools/list from API Gateway events', async () => {
    const file = bundle('mcp');
    // Under 1.4 MB: as the agents bundle (its a2a tools and end users' tokens too), with the MCP server, but without the SDK's zod 3 support
    // (zod/v3 and zod-to-json-schema, 80 KB, for tools with zod 3 schemas: Cairn's are zod 4).
    const mcp = shipped('mcp');
    expect(mcp.bytes).toBeLessThan(1_400_000);
    expect(mcp.text).not.toContain('ZodEffects');
    const { handler } = (await import(pathToFileURL(file).href)) as { handler: unknown };
    const t = await newTenant();
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const init = await invoke(handler, restEvent('POST', '/mcp', { apiKey: t.apiKey, headers, body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lambda-test', version: '1' } } } }));
    expect(init.statusCode).toBe(200);
    expect(JSON.parse(init.body)).toMatchObject({ id: 1, result: { serverInfo: { name: 'cairn' } } });
    const listed = await invoke(handler, restEvent('POST', '/mcp', { apiKey: t.apiKey, headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } }));
    expect((JSON.parse(listed.body) as { result: { tools: Array<{ name: string }> } }).result.tools.map((tool) => tool.name)).toContain('ask_agent');
  }, 60_000);

  it('reads PDFs, DOCX, PPTX and XLSX from within a bundle (pdf.js runs without its worker file)', async () => {
    const file = bundle('documents', 'shared/knowledge/documents/parse-document.ts');
    const { parseDocument } = (await import(pathToFileURL(file).href)) as { parseDocument: typeof parseDocumentType };
    const pdf = await makePdf([{ lines: ['first page'] }, { heading: 'Second', lines: ['second page text'] }]);
    expect((await parseDocument({ path: 'a.pdf', bytes: pdf })).blocks.at(-1)).toEqual({ headings: ['Second'], text: 'second page text', location: { page: 2 } });
    expect((await parseDocument({ path: 'a.pptx', bytes: await makePptx([{ title: 'T', body: ['slide body'] }]) })).blocks[0]?.location).toEqual({ slide: 1 });
    expect((await parseDocument({ path: 'a.xlsx', bytes: await makeXlsx([{ name: 'S', rows: [['h'], ['v']] }]) })).blocks[0]?.text).toBe('h: v');
    expect((await parseDocument({ path: 'a.docx', bytes: await makeDocx({ title: 'Doc', sections: [] , table: [['a', 'b']] }) })).blocks[0]?.text).toBe('a | b');
  }, 60_000);

  it('reads library formats in a worker thread from the bundle: a file that exhausts its heap or its time ends the worker, not the process', async () => {
    const file = bundle('isolated', 'shared/knowledge/documents/parse-isolated.ts');
    const { parseIsolated, parsingIsolated } = (await import(pathToFileURL(file).href)) as typeof isolatedModule;
    // A 200 KB DOCX that unpacks to 40 MB of XML, read by a worker with a 128 MB heap.
    const bomb = await makeDocxBomb(40);
    expect(bomb.byteLength).toBeLessThan(300 * 1024);
    const outcome = await parseIsolated({ path: 'bomb.docx', bytes: bomb }, { heapMb: 128 }).catch((e: unknown) => e);
    expect(outcome).toMatchObject({ code: 'DOCUMENT_TOO_LARGE', message: expect.stringMatching(/more than 128 MB/) });
    // The next file gets a new worker.
    const pdf = await makePdf([{ lines: ['first'] }, { heading: 'Second', lines: ['page two'] }]);
    expect((await parseIsolated({ path: 'a.pdf', bytes: pdf })).blocks.at(-1)).toEqual({ headings: ['Second'], text: 'page two', location: { page: 2 } });
    expect(parsingIsolated()).toBe(true);
    expect(await parseIsolated({ path: 'a.pdf', bytes: pdf }, { timeoutMs: 0 }).catch((e: unknown) => e)).toMatchObject({ code: 'PARSE_TIMEOUT' });
    // Text never leaves the calling thread.
    expect((await parseIsolated({ path: 'a.txt', bytes: Buffer.from('plain words') })).blocks[0]?.text).toBe('plain words');
  }, 120_000);

  it('bundles the code runner, which runs a job with the QuickJS WebAssembly shipped beside it, and carries QuickJS alone', async () => {
    const file = bundle('code-runner');
    // As the stack ships it (AppFunction files), read from the function's directory as in Lambda.
    cpSync(join('node_modules', '@jitl', 'quickjs-wasmfile-release-sync', 'dist', 'emscripten-module.wasm'), join(out, 'code-runner', 'quickjs.wasm'));
    const root = process.env.LAMBDA_TASK_ROOT;
    process.env.LAMBDA_TASK_ROOT = join(out, 'code-runner');
    try {
      const { handler } = (await import(pathToFileURL(file).href)) as { handler: (event: unknown) => Promise<unknown> };
      const job = { op: 'run', language: 'javascript', form: 'module', source: 'export default ({ input }) => { console.log("got", input); return input.length }', args: { input: 'four' }, timeoutMs: 1000, memoryMb: 16 };
      expect(await handler(job)).toMatchObject({ ok: true, value: 4, logs: ['got four'] });
      await expect(handler({ ...job, timeoutMs: 60_000 })).rejects.toThrow();
      // Its time limit holds for logging too (Lambda has no worker pool to stop a job), and a value nested too deep is the job's error.
      const started = performance.now();
      expect(await handler({ ...job, source: 'export default () => { const big = "x".repeat(20_000_000); for (;;) console.log(big) }', memoryMb: 128 })).toMatchObject({ ok: false, error: { kind: 'timeout' } });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(await handler({ ...job, source: 'export default () => { let o = {}; for (let i = 0; i < 100000; i++) o = { o }; return o }', memoryMb: 128 })).toMatchObject({ ok: false, error: { kind: 'error', message: expect.stringMatching(/stack overflow/) } });
      expect(await handler(job)).toMatchObject({ ok: true, value: 4 });
    } finally {
      if (root === undefined) delete process.env.LAMBDA_TASK_ROOT;
      else process.env.LAMBDA_TASK_ROOT = root;
    }
    // Only the code runner's bundle carries QuickJS.
    for (const group of ['agents', 'workflows', 'workflow-steps']) expect(shipped(group).text).not.toContain('QTS_NewRuntime');
  }, 120_000);

  it('bundles the ingestion worker, which answers SQS events with batchItemFailures', async () => {
    const file = bundle('ingestion');
    // pdf.js (through unpdf) is most of it: the price of reading PDFs, paid by this worker alone.
    expect(statSync(file).size).toBeLessThan(4 * 1024 * 1024);
    const { handler } = (await import(pathToFileURL(file).href)) as { handler: (e: unknown) => Promise<{ batchItemFailures: unknown[] }> };
    const t = await newTenant();
    const purge = { type: 'purge', tenantId: t.scope.tenantId, sourceId: 'ks_01m7y62dvspbq7k3p58zfb7w0n' };
    const ok = await handler({ Records: [recordOf({ MessageId: 'a', ReceiptHandle: 'r', Body: JSON.stringify(purge) })] });
    expect(ok.batchItemFailures).toEqual([]);
    const bad = await handler({ Records: [recordOf({ MessageId: 'b', ReceiptHandle: 'r', Body: '{oops' })] });
    expect(bad.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
  }, 60_000);

  it('bundles the docs handler, which serves Swagger UI from files beside the bundle', async () => {
    const file = bundle('api-docs');
    const assets = join(out, 'api-docs', 'swagger-ui');
    mkdirSync(assets, { recursive: true });
    for (const name of ['swagger-ui.css', 'swagger-ui-bundle.js']) cpSync(join('node_modules/swagger-ui-dist', name), join(assets, name));
    process.env.DOCS_ASSETS_DIR = assets;
    const { handler } = (await import(pathToFileURL(file).href)) as { handler: unknown };
    const css = await invoke(handler, restEvent('GET', '/v1/docs/swagger-ui.css'));
    expect(css.statusCode).toBe(200);
    expect(css.headers?.['content-type']).toContain('text/css');
    expect(css.body).toContain('.swagger-ui');
    const doc = await invoke(handler, restEvent('GET', '/v1/openapi.json'));
    expect(Object.keys(doc.json.paths)).toContain('/v1/agents/{agentId}');
  }, 60_000);
});
