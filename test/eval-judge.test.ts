import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { localRuntime, type LocalRuntime } from '../local/local-runtime';
import { openaiProvider } from '../shared/models/openai-provider';
import { modelResolver } from '../shared/models/resolve-model';
import { createDb } from '../shared/store/db';
import { call } from './helpers/http';
import { testPlatformSecrets, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * The llm_judge scorer: a configured provider's model grades each reply against the run's rubric
 * (and the case's), through the provider's real client against a stand-in of its HTTP API; with
 * only the built-in engine, a run asking for it is a 400 naming the setting that is missing.
 */
interface ChatBody {
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string; json_schema?: { name: string } };
}
const seen: ChatBody[] = [];

/** OpenAI's chat completions as recorded: a verdict of 1 for a reply naming 30 days, 0.2 otherwise; prose (not a verdict) when the rubric asks for it. */
const openai = createServer((req: IncomingMessage, res) => {
  let raw = '';
  req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as ChatBody;
    seen.push(body);
    // The grading prompt (a repair adds the judge's reply and a correction after it).
    const prompt = body.messages.find((m) => m.role === 'user')!.content;
    const reply = prompt.slice(prompt.indexOf('Reply to grade:'));
    const content = prompt.includes('ramble') ? 'I think it is fine.' : JSON.stringify({ score: reply.includes('30 days') ? 1 : 0.2, reasoning: reply.includes('30 days') ? 'Names the 30-day limit.' : 'Misses the time limit.' });
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-AbC123',
        object: 'chat.completion',
        created: 1764115200,
        model: 'gpt-4o-2024-08-06',
        choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 210, completion_tokens: 30, total_tokens: 240 },
        system_fingerprint: 'fp_5050236cbd',
      }),
    );
  });
});

let local: LocalRuntime;
let t: TestTenant;
let agentId: string;
const api = (method: string, path: string, body?: unknown) => call(createLocalApp(local.rt), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  await new Promise<void>((resolve) => openai.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(openai.address() as AddressInfo).port}/v1`;
  const configured = modelResolver();
  // OpenAI configured (its real client, at the stand-in); every other name resolves as it would here.
  const engine = openaiProvider({ baseUrl, apiKey: 'sk-test' });
  local = localRuntime({
    db: createDb(),
    secretsKey: randomBytes(32),
    platformSecrets: testPlatformSecrets,
    queueNamespace: randomBytes(6).toString('hex'),
    models: { ...configured, resolve: async (name) => (name.startsWith('openai/') ? { name, model: name.slice(7), engine } : configured.resolve(name)) },
  });
  await local.start();
  t = await newTenant();
  const ksId = (await api('POST', '/v1/knowledge-sources', { name: 'Help', type: 'file-collection', files: [{ path: 'returns.md', content: '# Returns\n\nItems can be returned within 30 days of delivery.' }] })).body.data.id;
  await api('POST', `/v1/knowledge-sources/${ksId}/connect`, {});
  await local.ingestion!.drain();
  agentId = (await api('POST', '/v1/agents', { name: 'Support', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ksId] })).body.data.id;
});

afterAll(async () => {
  await local?.stop();
  await new Promise<void>((resolve) => openai.close(() => resolve()));
});

describe('llm_judge', () => {
  it('grades each reply with the configured model against the rubric, and counts what the grading used apart', async () => {
    const datasetId = (
      await api('POST', '/v1/eval-datasets', {
        name: 'Judged',
        cases: [
          { input: 'How long do I have to return an item?', expected: { answer: '30 days' } },
          { input: 'What is the capital of Peru?', expected: { rubric: 'Says it does not know rather than guess.' } },
          { input: 'Can I return it?', expected: { rubric: 'ramble' } },
        ],
      })
    ).body.data.id;
    const rubric = 'Answers from the returns policy and names the time limit.';
    const started = await api('POST', '/v1/eval-runs', { datasetId, target: { agentId }, scorers: ['llm_judge'], judge: { model: 'openai/gpt-4o', rubric }, thresholds: { llm_judge: 0.5 } });
    expect(started.status).toBe(202);
    await local.workflowSteps!.drain();
    const run = (await api('GET', `/v1/eval-runs/${started.body.data.id}`)).body.data;
    // Scored: 1 (names 30 days) and 0.2; the third judge reply was prose twice (a repair was asked), so unscored.
    expect(run.summary).toMatchObject({ scores: { llm_judge: 0.6 }, scored: { llm_judge: 2 }, passed: true });
    // Four judge calls (three cases, one repair) of 210 + 30 tokens; gpt-4o is priced in MODEL_PRICES (0.0025 and 0.01 a thousand).
    expect(run.summary.judgeUsage).toEqual({ inputTokens: 840, outputTokens: 120, costUsd: 0.0033 });
    expect(run.summary.usage.costUsd).toBe(0);

    const results = (await api('GET', `/v1/eval-runs/${started.body.data.id}/results`)).body.data;
    expect(results[0]).toMatchObject({ scores: { llm_judge: 1 }, judge: { reasoning: 'Names the 30-day limit.', model: 'openai/gpt-4o', usage: { inputTokens: 210, outputTokens: 30 } } });
    expect(results[1]).toMatchObject({ scores: { llm_judge: 0.2 }, passed: false });
    expect(results[2].scores.llm_judge).toBeNull();
    expect(results[2].skipped.llm_judge).toMatch(/not a verdict/);

    // The judge saw the rubric (the run's and the case's), the question, the expected answer and the reply, and was asked for a verdict's schema.
    const promptOf = (b: ChatBody) => b.messages.find((m) => m.role === 'user')!.content;
    const first = seen.find((b) => promptOf(b).includes('How long do I have'))!;
    expect(first.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'verdict' } });
    expect(promptOf(first)).toContain(rubric);
    expect(promptOf(first)).toContain('Expected answer:\n30 days');
    expect(promptOf(first)).toContain(`Reply to grade:\n${results[0].output}`);
    expect(seen.some((b) => promptOf(b).includes('Says it does not know rather than guess.'))).toBe(true);
  });
});

describe('llm_judge without a provider', () => {
  const app = createLocalApp(testRt);
  let other: TestTenant;
  let datasetId: string;
  let otherAgent: string;
  const start = (body: Record<string, unknown>) => call(app, 'POST', '/v1/eval-runs', { key: other.apiKey, body: { datasetId, target: { agentId: otherAgent }, ...body } });

  beforeAll(async () => {
    other = await newTenant();
    otherAgent = (await call(app, 'POST', '/v1/agents', { key: other.apiKey, body: { name: 'A', model: 'local/extractive' } })).body.data.id;
    datasetId = (await call(app, 'POST', '/v1/eval-datasets', { key: other.apiKey, body: { name: 'D', cases: [{ input: 'hi' }] } })).body.data.id;
  });

  it('is a 400 that names the setting missing for the judge model', async () => {
    const rubric = 'Polite.';
    const unconfigured = await start({ scorers: ['llm_judge'], judge: { model: 'openai/gpt-4o', rubric } });
    expect(unconfigured.status).toBe(400);
    expect(unconfigured.body.error.details.field).toBe('judge.model');
    expect(unconfigured.body.error.message).toContain('OPENAI_API_KEY');
    expect((await start({ scorers: ['llm_judge'], judge: { model: 'anthropic/claude-sonnet-4', rubric } })).body.error.message).toContain('ANTHROPIC_API_KEY');
    expect((await start({ scorers: ['llm_judge'], judge: { model: 'bedrock/anthropic.claude-3-haiku-20240307-v1:0', rubric } })).body.error.message).toContain('BEDROCK_REGION');
    expect((await start({ scorers: ['llm_judge'], judge: { model: 'local/extractive', rubric } })).body.error.message).toContain('built-in engine');
    expect((await start({ scorers: ['llm_judge'], judge: { model: 'gpt-4', rubric } })).body.error.message).toContain('DEFAULT_MODEL_PROVIDER');
  });

  it('needs a judge with llm_judge, and llm_judge with a judge', async () => {
    const without = await start({ scorers: ['llm_judge'] });
    expect(without.status).toBe(400);
    expect(without.body.error.message).toContain('judge');
    const stray = await start({ scorers: ['contains'], judge: { model: 'openai/gpt-4o', rubric: 'x' } });
    expect(stray.status).toBe(400);
    expect(stray.body.error.message).toContain('judge');
  });
});
