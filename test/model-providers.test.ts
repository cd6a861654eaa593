import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../shared/errors';
import { anthropicProvider } from '../shared/models/anthropic-provider';
import { bedrockProvider } from '../shared/models/bedrock-provider';
import { openaiProvider } from '../shared/models/openai-provider';
import type { ChatModel, ChatRequest } from '../shared/models/types';

/**
 * Each provider adapter against a local server speaking that provider's wire format, with
 * response shapes recorded from the real APIs (bodies, stream chunks, error bodies). These
 * stand-ins are the only fakes in the suite: paid model APIs cannot run here.
 */
interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}
const seen: Seen[] = [];
let mode: 'ok' | 'error' | 'slow' | 'tools' | 'cached' = 'ok';
let server: Server;
let base = '';

const sse = (res: ServerResponse, events: Array<{ event?: string; data: unknown }>) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
  res.end();
};

// Recorded usage shapes of calls whose prompt prefix came from the provider's cache.
const OPENAI_CACHED_USAGE = { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } };
const ANTHROPIC_CACHED_USAGE = { input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 1800, output_tokens: 120, service_tier: 'standard' };
const BEDROCK_CACHED_USAGE = { inputTokens: 40, outputTokens: 90, totalTokens: 2130, cacheReadInputTokens: 0, cacheWriteInputTokens: 2000 };

function openai(body: Record<string, unknown>, res: ServerResponse) {
  if (mode === 'cached' && body.stream) {
    const chunk = (delta: unknown, finish: string | null, usage: unknown = null) => ({ id: 'chatcmpl-C', object: 'chat.completion.chunk', created: 1795255200, model: 'gpt-4o', choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage });
    return sse(res, [{ data: chunk({ role: 'assistant', content: 'Within 30 days.' }, null) }, { data: chunk({}, 'stop') }, { data: chunk(null, null, OPENAI_CACHED_USAGE) }, { data: '[DONE]' }]);
  }
  if (mode === 'cached') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ id: 'chatcmpl-C', object: 'chat.completion', created: 1795255200, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Within 30 days.', refusal: null }, logprobs: null, finish_reason: 'stop' }], usage: OPENAI_CACHED_USAGE }));
  }
  if (mode === 'error') {
    res.writeHead(429, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: { message: 'Rate limit reached for gpt-4o', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
  }
  if (mode === 'tools' && body.stream) {
    // Recorded shape: the call's id and name first, its arguments in fragments, then finish_reason tool_calls.
    const chunk = (delta: unknown, finish: string | null) => ({ id: 'chatcmpl-T', object: 'chat.completion.chunk', created: 1795255200, model: 'gpt-4o', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    return sse(res, [
      { data: chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_Xy', type: 'function', function: { name: 'order_status', arguments: '' } }], refusal: null }, null) },
      { data: chunk({ tool_calls: [{ index: 0, function: { arguments: '{"orde' } }] }, null) },
      { data: chunk({ tool_calls: [{ index: 0, function: { arguments: 'rId":"A17"}' } }] }, null) },
      { data: chunk({}, 'tool_calls') },
      { data: '[DONE]' },
    ]);
  }
  if (mode === 'tools') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({
      id: 'chatcmpl-T', object: 'chat.completion', created: 1795255200, model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_Xy', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A17"}' } }], refusal: null }, logprobs: null, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 80, completion_tokens: 17, total_tokens: 97 },
    }));
  }
  if (body.stream) {
    const chunk = (delta: unknown, finish: string | null, usage: unknown = null) => ({
      id: 'chatcmpl-AbC', object: 'chat.completion.chunk', created: 1795255200, model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_1',
      choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage,
    });
    return sse(res, [
      { data: chunk({ role: 'assistant', content: '', refusal: null }, null) },
      { data: chunk({ content: 'Within ' }, null) },
      { data: chunk({ content: '30 days [1].' }, null) },
      { data: chunk({}, 'stop') },
      { data: chunk(null, null, { prompt_tokens: 57, completion_tokens: 6, total_tokens: 63 }) },
      { data: '[DONE]' },
    ]);
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: 'chatcmpl-AbC', object: 'chat.completion', created: 1795255200, model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Within 30 days [1].', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 57, completion_tokens: 6, total_tokens: 63 }, system_fingerprint: 'fp_1',
  }));
}

function anthropic(body: Record<string, unknown>, res: ServerResponse) {
  if (mode === 'cached' && body.stream) {
    return sse(res, [
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_C', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4', stop_reason: null, usage: { ...ANTHROPIC_CACHED_USAGE, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Within 30 days.' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 120 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  }
  if (mode === 'cached') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ id: 'msg_C', type: 'message', role: 'assistant', model: 'claude-sonnet-4', content: [{ type: 'text', text: 'Within 30 days.' }], stop_reason: 'end_turn', stop_sequence: null, usage: ANTHROPIC_CACHED_USAGE }));
  }
  if (mode === 'error') {
    res.writeHead(529, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
  }
  if (mode === 'tools' && body.stream) {
    return sse(res, [
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_T', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4', stop_reason: null, usage: { input_tokens: 90, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check.' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01', name: 'order_status', input: {} } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"orderId": "A' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '17"}' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  }
  if (mode === 'tools') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({
      id: 'msg_T', type: 'message', role: 'assistant', model: 'claude-sonnet-4',
      content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_01', name: 'order_status', input: { orderId: 'A17' } }],
      stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 90, output_tokens: 40 },
    }));
  }
  if (body.stream) {
    return sse(res, [
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_01', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4', stop_reason: null, usage: { input_tokens: 61, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'ping', data: { type: 'ping' } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Within ' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '30 days [1].' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 8 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4', content: [{ type: 'text', text: 'Within 30 days [1].' }],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 61, output_tokens: 8 },
  }));
}

const fromUtf8 = (text: string) => new TextEncoder().encode(text);
const toUtf8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const frame = (type: string, payload: unknown) =>
  codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });

/** ConverseStream: AWS event-stream frames, as Bedrock sends them. */
function bedrockStream(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  if (mode === 'cached') {
    for (const [type, payload] of [
      ['messageStart', { role: 'assistant', p: 'abcd' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Within 30 days.' }, p: 'abcdef' }],
      ['contentBlockStop', { contentBlockIndex: 0, p: 'abc' }],
      ['messageStop', { stopReason: 'end_turn', p: 'abcdefg' }],
      ['metadata', { usage: BEDROCK_CACHED_USAGE, metrics: { latencyMs: 388 }, p: 'a' }],
    ] as const) {
      res.write(frame(type, payload));
    }
    return res.end();
  }
  if (mode === 'tools') {
    for (const [type, payload] of [
      ['messageStart', { role: 'assistant', p: 'abcd' }],
      ['contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_Q', name: 'order_status' } }, p: 'ab' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"orderId":' } }, p: 'abc' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '"A17"}' } }, p: 'a' }],
      ['contentBlockStop', { contentBlockIndex: 0, p: 'abc' }],
      ['messageStop', { stopReason: 'tool_use', p: 'abcdefg' }],
      ['metadata', { usage: { inputTokens: 88, outputTokens: 21, totalTokens: 109 }, metrics: { latencyMs: 401 }, p: 'a' }],
    ] as const) {
      res.write(frame(type, payload));
    }
    return res.end();
  }
  for (const [type, payload] of [
    ['messageStart', { role: 'assistant', p: 'abcd' }],
    ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Within ' }, p: 'abcdef' }],
    ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: '30 days [1].' }, p: 'ab' }],
    ['contentBlockStop', { contentBlockIndex: 0, p: 'abc' }],
    ['messageStop', { stopReason: 'end_turn', p: 'abcdefg' }],
    ['metadata', { usage: { inputTokens: 59, outputTokens: 7, totalTokens: 66 }, metrics: { latencyMs: 388 }, p: 'a' }],
  ] as const) {
    res.write(frame(type, payload));
  }
  res.end();
}

function bedrock(res: ServerResponse) {
  if (mode === 'cached') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'Within 30 days.' }] } }, stopReason: 'end_turn', usage: BEDROCK_CACHED_USAGE, metrics: { latencyMs: 412 } }));
  }
  if (mode === 'error') {
    res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    return res.end(JSON.stringify({ message: 'The provided model identifier is invalid.' }));
  }
  if (mode === 'tools') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({
      output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_Q', name: 'order_status', input: { orderId: 'A17' } } }] } },
      stopReason: 'tool_use', usage: { inputTokens: 88, outputTokens: 21, totalTokens: 109 }, metrics: { latencyMs: 401 },
    }));
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: 'Within 30 days [1].' }] } },
    stopReason: 'end_turn', usage: { inputTokens: 59, outputTokens: 7, totalTokens: 66 }, metrics: { latencyMs: 412 },
  }));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      seen.push({ url: req.url!, headers: req.headers, body });
      const respond = () => {
        if (req.url === '/v1/chat/completions') openai(body, res);
        else if (req.url === '/v1/messages') anthropic(body, res);
        else if (req.url?.startsWith('/model/') && req.url.endsWith('/converse-stream')) bedrockStream(res);
        else if (req.url?.startsWith('/model/')) bedrock(res);
        else res.writeHead(404).end();
      };
      if (mode === 'slow') setTimeout(respond, 2000);
      else respond();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const request: ChatRequest = {
  model: 'the-model',
  now: Date.now(),
  messages: [
    { role: 'user', content: 'My order is 12.' },
    { role: 'assistant', content: 'Noted.' },
    { role: 'user', content: 'How long can I return it?' },
  ],
  instructions: 'You are the support bot.',
  passages: [{ title: 'Returns', text: 'Items can be returned within 30 days.' }],
  temperature: 0.3,
  maxTokens: 256,
};

async function collect(model: ChatModel) {
  const deltas: string[] = [];
  const generator = model.stream(request, AbortSignal.timeout(5000));
  let step = await generator.next();
  while (!step.done) {
    deltas.push(step.value);
    step = await generator.next();
  }
  return { deltas, result: step.value };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a failure');
}

const providers = () => ({
  openai: openaiProvider({ baseUrl: `${base}/v1`, apiKey: 'sk-test' }),
  anthropic: anthropicProvider({ baseUrl: base, apiKey: 'sk-ant-test' }),
  bedrock: bedrockProvider(async () =>
    new BedrockRuntimeClient({ endpoint: base, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() }),
  ),
});

describe('model provider adapters', () => {
  it('OpenAI(-compatible): passes model, history, instructions, passages, temperature and max tokens', async () => {
    mode = 'ok';
    seen.length = 0;
    const result = await providers().openai.generate(request, AbortSignal.timeout(5000));
    expect(result).toEqual({ text: 'Within 30 days [1].', usage: { inputTokens: 57, outputTokens: 6 }, finishReason: 'stop' });
    const sent = seen[0]!;
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ model: 'the-model', temperature: 0.3, max_tokens: 256, stream: false });
    const messages = sent.body.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[0]!.content).toContain('You are the support bot.');
    expect(messages[0]!.content).toContain('[1] Returns: Items can be returned within 30 days.');
    const streamed = await collect(providers().openai);
    expect(streamed.deltas).toEqual(['Within ', '30 days [1].']);
    expect(streamed.result).toEqual({ text: 'Within 30 days [1].', usage: { inputTokens: 57, outputTokens: 6 }, finishReason: 'stop' });
  });

  it('Anthropic: system prompt apart, x-api-key and version headers, streamed deltas and usage', async () => {
    mode = 'ok';
    seen.length = 0;
    const result = await providers().anthropic.generate(request, AbortSignal.timeout(5000));
    expect(result).toEqual({ text: 'Within 30 days [1].', usage: { inputTokens: 61, outputTokens: 8 }, finishReason: 'stop' });
    expect(seen[0]!.headers['x-api-key']).toBe('sk-ant-test');
    expect(seen[0]!.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen[0]!.body).toMatchObject({ model: 'the-model', max_tokens: 256, temperature: 0.3 });
    // The stable prompt and the passages as two system blocks, each ending a cacheable prefix.
    const system = seen[0]!.body.system as Array<{ type: string; text: string; cache_control?: unknown }>;
    expect(system.map((b) => b.cache_control)).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }]);
    expect(system[0]!.text).toContain('You are the support bot.');
    expect(system[1]!.text).toContain('Items can be returned within 30 days.');
    expect((seen[0]!.body.messages as unknown[]).length).toBe(3);
    const streamed = await collect(providers().anthropic);
    expect(streamed.deltas).toEqual(['Within ', '30 days [1].']);
    expect(streamed.result).toEqual({ text: 'Within 30 days [1].', usage: { inputTokens: 61, outputTokens: 8 }, finishReason: 'stop' });
  });

  it('Bedrock: the Converse API, signed, with the system prompt and inference config', async () => {
    mode = 'ok';
    seen.length = 0;
    const result = await providers().bedrock.generate({ ...request, model: 'anthropic.claude-3-haiku-20240307-v1:0' }, AbortSignal.timeout(5000));
    expect(result).toEqual({ text: 'Within 30 days [1].', usage: { inputTokens: 59, outputTokens: 7 }, finishReason: 'stop' });
    expect(decodeURIComponent(seen[0]!.url)).toBe('/model/anthropic.claude-3-haiku-20240307-v1:0/converse');
    expect(String(seen[0]!.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(seen[0]!.body).toMatchObject({ inferenceConfig: { temperature: 0.3, maxTokens: 256 } });
    expect(JSON.stringify(seen[0]!.body.system)).toContain('Items can be returned within 30 days.');
    const streamed = await collect(providers().bedrock);
    expect(streamed.deltas).toEqual(['Within ', '30 days [1].']);
    expect(streamed.result).toEqual({ text: 'Within 30 days [1].', usage: { inputTokens: 59, outputTokens: 7 }, finishReason: 'stop' });
    expect(seen[seen.length - 1]!.url).toMatch(/\/converse-stream$/);
    // An agent's Bedrock guardrail goes to the Converse API as its guardrailConfig.
    seen.length = 0;
    await providers().bedrock.generate({ ...request, model: 'anthropic.claude-3-haiku-20240307-v1:0', bedrockGuardrail: { identifier: 'gr-abc123', version: '2' } }, AbortSignal.timeout(5000));
    expect(seen[0]!.body.guardrailConfig).toEqual({ guardrailIdentifier: 'gr-abc123', guardrailVersion: '2' });
  });

  it('passes top_p and stop sequences in each provider’s own words', async () => {
    mode = 'ok';
    const tuned = { ...request, topP: 0.9, stop: ['END', '###'] };
    seen.length = 0;
    await providers().openai.generate(tuned, AbortSignal.timeout(5000));
    expect(seen[0]!.body).toMatchObject({ top_p: 0.9, stop: ['END', '###'] });
    seen.length = 0;
    await providers().anthropic.generate(tuned, AbortSignal.timeout(5000));
    expect(seen[0]!.body).toMatchObject({ top_p: 0.9, stop_sequences: ['END', '###'] });
    seen.length = 0;
    await providers().bedrock.generate({ ...tuned, model: 'anthropic.claude-3-haiku-20240307-v1:0' }, AbortSignal.timeout(5000));
    expect(seen[0]!.body).toMatchObject({ inferenceConfig: { topP: 0.9, stopSequences: ['END', '###'] } });
    // Without them, nothing is sent: each provider keeps its default.
    seen.length = 0;
    await providers().openai.generate(request, AbortSignal.timeout(5000));
    expect(seen[0]!.body).not.toHaveProperty('top_p');
    expect(seen[0]!.body).not.toHaveProperty('stop');
  });

  it('calls tools natively with each provider: tools sent in its format, calls parsed whole and streamed, results sent back', async () => {
    mode = 'tools';
    const tools = [{ name: 'order_status', description: 'Order status by number', parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } }];
    const asking = { ...request, tools };
    const p = providers();
    const expected = (id: string) => [{ id, name: 'order_status', arguments: { orderId: 'A17' } }];
    for (const [name, model, id] of [['openai', p.openai, 'call_Xy'], ['anthropic', p.anthropic, 'toolu_01'], ['bedrock', p.bedrock, 'tooluse_Q']] as const) {
      const whole = await model.generate({ ...asking, model: 'anthropic.claude-3-haiku-20240307-v1:0' }, AbortSignal.timeout(5000));
      expect(whole.finishReason, name).toBe('tool_calls');
      expect(whole.toolCalls, name).toEqual(expected(id));
      const streamed = await collect({ ...model, stream: (r, s) => model.stream({ ...r, tools }, s) });
      expect(streamed.result.finishReason, name).toBe('tool_calls');
      expect(streamed.result.toolCalls, name).toEqual(expected(id));
    }
    // What each provider was sent: the tools, then (with a round done) the call and its result.
    seen.length = 0;
    const round = { calls: expected('c1'), results: [{ id: 'c1', name: 'order_status', content: '{"status":"shipped"}', isError: false }] };
    for (const model of [p.openai, p.anthropic, p.bedrock]) await model.generate({ ...asking, model: 'm', toolRounds: [round] }, AbortSignal.timeout(5000));
    const [o, a, b] = seen.map((s) => s.body);
    expect(o!.tools).toEqual([{ type: 'function', function: { name: 'order_status', description: 'Order status by number', parameters: tools[0]!.parameters } }]);
    expect((o!.messages as unknown[]).slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A17"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{"status":"shipped"}' },
    ]);
    // The last tool ends the cacheable prefix of tool schemas.
    expect(a!.tools).toEqual([{ name: 'order_status', description: 'Order status by number', input_schema: tools[0]!.parameters, cache_control: { type: 'ephemeral' } }]);
    expect((a!.messages as unknown[]).slice(-2)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'order_status', input: { orderId: 'A17' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: '{"status":"shipped"}' }] },
    ]);
    expect(b!.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'order_status', description: 'Order status by number', inputSchema: { json: tools[0]!.parameters } } }] });
    expect((b!.messages as unknown[]).slice(-2)).toEqual([
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'c1', name: 'order_status', input: { orderId: 'A17' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'c1', content: [{ text: '{"status":"shipped"}' }], status: 'success' } }] },
    ]);
    mode = 'ok';
  });

  it('prompt caching: cache marks on the stable prefix where the provider takes them, and each provider’s cached-token counts read', async () => {
    mode = 'cached';
    const tools = [{ name: 'order_status', description: 'Order status by number', parameters: { type: 'object', properties: { orderId: { type: 'string' } } } }];
    const p = providers();
    const cachingModel = 'us.anthropic.claude-3-7-sonnet-20250219-v1:0'; // a cross-region inference profile of a model Bedrock caches for
    // OpenAI caches by itself: nothing is marked, the cached tokens are read from prompt_tokens_details.
    const openaiUsage = { inputTokens: 2006, outputTokens: 300, cachedInputTokens: 1920 };
    expect((await p.openai.generate(request, AbortSignal.timeout(5000))).usage).toEqual(openaiUsage);
    expect((await collect(p.openai)).result.usage).toEqual(openaiUsage);
    // Anthropic counts cache reads and writes apart from input_tokens: the prompt is all of them.
    const anthropicUsage = { inputTokens: 1850, outputTokens: 120, cachedInputTokens: 1800, cacheWriteTokens: 0 };
    expect((await p.anthropic.generate(request, AbortSignal.timeout(5000))).usage).toEqual(anthropicUsage);
    expect((await collect(p.anthropic)).result.usage).toEqual(anthropicUsage);
    // Bedrock likewise, with cacheReadInputTokens / cacheWriteInputTokens.
    const bedrockUsage = { inputTokens: 2040, outputTokens: 90, cachedInputTokens: 0, cacheWriteTokens: 2000 };
    seen.length = 0;
    expect((await p.bedrock.generate({ ...request, model: cachingModel, tools }, AbortSignal.timeout(5000))).usage).toEqual(bedrockUsage);
    expect((await collect({ ...p.bedrock, stream: (r, s) => p.bedrock.stream({ ...r, model: cachingModel }, s) })).result.usage).toEqual(bedrockUsage);
    // The Converse body: a cachePoint after the stable prompt, after the passages, and after the tools.
    const converse = seen[0]!.body as { system: unknown[]; toolConfig: { tools: unknown[] } };
    expect(converse.system).toEqual([{ text: 'You are the support bot.' }, { cachePoint: { type: 'default' } }, { text: expect.stringContaining('[1] Returns: Items can be returned within 30 days.') }, { cachePoint: { type: 'default' } }]);
    expect(converse.toolConfig.tools.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    // A model Bedrock does not cache for is sent no mark (it would refuse the request), unless the provider says so.
    seen.length = 0;
    await p.bedrock.generate({ ...request, model: 'anthropic.claude-3-haiku-20240307-v1:0', tools }, AbortSignal.timeout(5000));
    expect(JSON.stringify(seen[0]!.body)).not.toContain('cachePoint');
    const forced = bedrockProvider(async () => new BedrockRuntimeClient({ endpoint: base, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() }), { promptCaching: true });
    seen.length = 0;
    await forced.generate({ ...request, model: 'my-imported-model' }, AbortSignal.timeout(5000));
    expect(JSON.stringify(seen[0]!.body)).toContain('cachePoint');
    // Anthropic with caching turned off: plain blocks, no marks.
    seen.length = 0;
    await anthropicProvider({ baseUrl: base, apiKey: 'k', promptCaching: false }).generate({ ...request, tools }, AbortSignal.timeout(5000));
    expect(JSON.stringify(seen[0]!.body)).not.toContain('cache_control');
    mode = 'ok';
  });

  it('turns provider errors into 502 UPSTREAM_ERROR naming the provider and its status', async () => {
    mode = 'error';
    const p = providers();
    const openaiError = await failure(p.openai.generate(request, AbortSignal.timeout(5000)));
    expect(openaiError).toMatchObject({ code: 'UPSTREAM_ERROR', statusCode: 502, details: { provider: 'openai', status: 429, providerMessage: 'Rate limit reached for gpt-4o' } });
    expect(await failure(p.anthropic.generate(request, AbortSignal.timeout(5000)))).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'anthropic', status: 529 } });
    expect(await failure(collect(p.anthropic))).toMatchObject({ details: { provider: 'anthropic', status: 529 } });
    expect(await failure(p.bedrock.generate(request, AbortSignal.timeout(5000)))).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'bedrock', status: 400 } });
  });

  it('turns a provider that does not answer in time into 502 with status timeout', async () => {
    mode = 'slow';
    const p = providers();
    expect(await failure(p.openai.generate(request, AbortSignal.timeout(300)))).toMatchObject({ code: 'UPSTREAM_ERROR', details: { provider: 'openai', status: 'timeout' } });
    expect(await failure(p.bedrock.generate(request, AbortSignal.timeout(300)))).toMatchObject({ details: { provider: 'bedrock', status: 'timeout' } });
    mode = 'ok';
  });
});
