import { serve } from '@hono/node-server';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { runCli } from '../local/cairn-cli';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * `npx cairn eval`, against Cairn served over HTTP: a run that passes exits 0, one that fails a
 * threshold or regresses exits 1, and a usage error, an unknown dataset or an unreachable Cairn
 * exits 2; `eval import` adds a JSON Lines file in requests under the body limit.
 */
const app = createLocalApp(testRt);
let server: Server;
let base: string;
let t: TestTenant;
let agentId: string;
let dir: string;

/** Runs the CLI in-process; the queue is worked between its polls. */
async function cli(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { CAIRN_BASE_URL: base, CAIRN_API_KEY: t.apiKey }, { out: (s) => void (out += s), err: (s) => void (err += s), sleep: () => testLocal.workflowSteps!.drain() });
  return { code, out, err };
}

beforeAll(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await newTenant();
  dir = await mkdtemp(join(tmpdir(), 'cairn-cli-'));
  const api = (method: string, path: string, body?: unknown) => call(app, method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
  const files = [
    { path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' },
    { path: 'shipping.md', content: '# Shipping\n\nStandard shipping takes 3 to 5 days. Express shipping arrives the next day.' },
  ];
  const ksId = (await api('POST', '/v1/knowledge-sources', { name: 'Help', type: 'file-collection', files })).body.data.id;
  await api('POST', `/v1/knowledge-sources/${ksId}/connect`, {});
  await testLocal.ingestion!.drain();
  agentId = (await api('POST', '/v1/agents', { name: 'Support', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ksId] })).body.data.id;
  await api('POST', `/v1/agents/${agentId}/versions`, {});
  // Version 2 regresses on purpose: it no longer searches its sources.
  await api('PUT', `/v1/agents/${agentId}`, { name: 'Support', model: 'local/extractive', capabilities: ['chat'], knowledgeSourceIds: [] });
  await api('POST', `/v1/agents/${agentId}/versions`, {});
});

afterAll(() => server?.close());

describe('npx cairn eval', () => {
  let datasetId: string;
  let baseline: string;

  it('imports a JSON Lines file, making the dataset', async () => {
    const file = join(dir, 'cases.jsonl');
    await writeFile(
      file,
      [
        '{"input": "How long do I have to return an item?", "expected": {"contains": ["30 days"], "sources": ["returns.md"]}}',
        '',
        '{"input": [{"role": "user", "content": "How long does standard shipping take?"}], "ideal": "3 to 5 days"}',
        '{"input": "When does express shipping arrive?", "expected": {"contains": ["next day"]}}',
      ].join('\n'),
    );
    const imported = await cli('eval', 'import', file, '--create', 'CLI cases');
    expect(imported.code).toBe(0);
    datasetId = /made dataset (eds_\w+)/.exec(imported.err)![1]!;
    expect(imported.out).toContain(`3 cases added to ${datasetId}`);
    expect((await call(app, 'GET', `/v1/eval-datasets/${datasetId}`, { key: t.apiKey })).body.data.caseCount).toBe(3);
  });

  it('exits 0 on a run that passes, printing its scores', async () => {
    const run = await cli('eval', 'run', '--dataset', datasetId, '--agent', `${agentId}:1`, '--threshold', 'contains=0.9');
    expect(run.err).toContain('3/3');
    expect(run.code).toBe(0);
    baseline = /run (evr_\w+)/.exec(run.err)![1]!;
    // The scorers come from the cases' expectations: contains (two cases), f1 (ideal), citations (sources).
    expect(run.out).toMatch(/contains\s+1\.000\s+2\s+≥ 0\.9\s+ok/);
    expect(run.out).toMatch(/^f1\s/m);
    expect(run.out).toMatch(/^citations\s/m);
    expect(run.out).toContain(`PASSED: run ${baseline} (completed)`);
  });

  it('exits 1 when the candidate fails a threshold and regresses against the baseline', async () => {
    const run = await cli('eval', 'run', '--dataset', datasetId, '--agent', `${agentId}:2`, '--scorer', 'contains', '--threshold', 'contains=0.9', '--compare-to', baseline);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/contains\s+0\.\d+\s+2\s+≥ 0\.9\s+FAIL/);
    expect(run.out).toMatch(/against evr_\w+: [1-3] regressions/);
    expect(run.out).toContain('FAILED');
    // --json prints the run as the API shows it.
    const json = await cli('eval', 'run', '--dataset', datasetId, '--agent', `${agentId}:2`, '--scorer', 'contains', '--threshold', 'contains=0.9', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({ status: 'completed', summary: { passed: false } });
  });

  it('exits 2 on a usage error, an unknown dataset, a bad line, or no Cairn to ask', async () => {
    const refused = [
      await cli('eval', 'run', '--agent', agentId),
      await cli('eval', 'run', '--dataset', datasetId, '--agent', agentId, '--threshold', 'contains=2'),
      await cli('eval', 'run', '--dataset', datasetId, '--agent', agentId, '--bogus'),
      await cli('eval', 'run', '--dataset', 'eds_missing', '--agent', agentId, '--scorer', 'f1'),
      await cli('eval', 'run', '--dataset', datasetId, '--agent', agentId, '--scorer', 'nonsense'),
      await cli('eval', 'frobnicate'),
    ];
    expect(refused.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(refused[3]!.err).toContain('404');
    expect(refused[4]!.err).toContain('scorers[0]');

    const bad = join(dir, 'bad.jsonl');
    await writeFile(bad, '{"input": "fine"}\n{"input": \n');
    const notJson = await cli('eval', 'import', bad, '--dataset', datasetId);
    expect(notJson.code).toBe(2);
    expect(notJson.err).toContain(`${bad}:2 is not JSON`);
    const notCase = join(dir, 'not-case.jsonl');
    await writeFile(notCase, '{"input": "fine"}\n\n{"input": ""}\n');
    const refusedCase = await cli('eval', 'import', notCase, '--dataset', datasetId);
    expect(refusedCase.code).toBe(2);
    expect(refusedCase.err).toContain(`${notCase}:3`);
    expect((await call(app, 'GET', `/v1/eval-datasets/${datasetId}`, { key: t.apiKey })).body.data.caseCount).toBe(3);

    const unreachable = await runCli(['eval', 'run', '--dataset', datasetId, '--agent', agentId, '--scorer', 'f1'], { CAIRN_BASE_URL: 'http://127.0.0.1:1', CAIRN_API_KEY: 'k' }, { out: () => undefined, err: () => undefined });
    expect(unreachable).toBe(2);
  });

  it('runs as npx cairn: without CAIRN_BASE_URL it is a usage error (2)', async () => {
    const { PATH, HOME } = process.env;
    const code = await new Promise<number>((resolve) => {
      execFile(process.execPath, ['local/cairn.mjs', 'eval', 'run', '--dataset', 'eds_x', '--agent', 'agt_x', '--scorer', 'f1'], { env: { PATH, HOME } }, (error) => resolve(error ? Number(error.code) : 0));
    });
    expect(code).toBe(2);
  });
});
