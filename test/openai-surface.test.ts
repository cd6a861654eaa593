import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/** The OpenAI-compatible surface as the official `openai` client meets it. */
const app = createLocalApp(testRt);
const clientFor = (apiKey: string) =>
  new OpenAI({ apiKey, baseURL: 'http://cairn.test/v1', maxRetries: 0, fetch: async (url: string | URL | Request, init?: RequestInit) => app.request(url instanceof Request ? url : url.toString(), init) });

describe('the OpenAI-compatible surface', () => {
  let t: TestTenant;
  let client: OpenAI;
  let agentId: string;
  const call_ = (path: string) => call(app, 'GET', path, { key: t.apiKey });
  beforeAll(async () => {
    t = await newTenant();
    client = clientFor(t.apiKey);
    const created = await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Echo', model: 'gpt-4', instructions: 'Be helpful.' } });
    agentId = created.body.data.id;
  });

  it('lists the tenant’s agents as models, and gets one', async () => {
    const other = await newTenant();
    await call(app, 'POST', '/v1/agents', { key: other.apiKey, body: { name: 'Not yours', model: 'gpt-4' } });
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models).toEqual([expect.objectContaining({ id: agentId, object: 'model', owned_by: 'cairn', name: 'Echo' })]);
    expect(await client.models.retrieve(agentId)).toMatchObject({ id: agentId, object: 'model' });
    await expect(client.models.retrieve('agt_01m7y62dvspbq7k3p58zfb7w0n')).rejects.toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error' });
  });

  it('continues a stored response with previous_response_id; a response kept with store: false cannot be continued', async () => {
    const first = await client.responses.create({ model: agentId, input: 'My parcel number is 4417 and it left Lyon on Monday.' });
    expect(first.id).toMatch(/^resp_[0-9a-z]{26}_[0-9a-z]{26}_[0-9a-z]{26}$/);
    const second = await client.responses.create({ model: agentId, previous_response_id: first.id, input: 'What is my parcel number?' });
    expect(second.output_text).toContain('4417');
    expect(second.id).not.toBe(first.id);
    // Streamed, the first event names the id the last one does.
    const events = [];
    for await (const e of await client.responses.create({ model: agentId, previous_response_id: second.id, input: 'Tell me my parcel number again', stream: true })) events.push(e);
    const created = events.find((e) => e.type === 'response.created') as { response: { id: string } };
    const completed = events.find((e) => e.type === 'response.completed') as { response: { id: string; output: Array<{ content?: Array<{ text: string }> }> } };
    expect(created.response.id).toBe(completed.response.id);
    expect(JSON.stringify(completed.response.output)).toContain('4417');
    const unstored = await client.responses.create({ model: agentId, input: 'Remember 99.', store: false });
    await expect(client.responses.create({ model: agentId, previous_response_id: unstored.id, input: 'What number?' })).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
    await expect(client.responses.create({ model: agentId, previous_response_id: 'resp_nope', input: 'x' })).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
  });

  it('runs the standard tool loop by id: a function_call answered with previous_response_id and its function_call_output', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }];
    const asked = await client.responses.create({ model: agentId, input: 'What is the weather in "Rome"?', tools });
    const call = asked.output.find((item) => item.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Rome"}' });
    const answered = await client.responses.create({
      model: agentId,
      previous_response_id: asked.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"city":"Rome","sky":"cloudy","celsius":18}' }],
      tools,
    });
    expect(answered.output_text).toContain('cloudy');
    // The conversation goes on from the answer: its question is stored once, then both replies.
    const { sessionId } = (answered as unknown as { cairn: { sessionId: string } }).cairn;
    const messages = (await call_(`/v1/agents/${agentId}/sessions/${sessionId}/messages`)).body.data as Array<{ role: string; content: string; clientToolCalls?: unknown[] }>;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(messages[1]!.clientToolCalls).toEqual([{ id: call.call_id, name: 'get_weather', arguments: { city: 'Rome' } }]);
    // Outputs that do not answer the previous response's calls are refused, naming the item.
    await expect(client.responses.create({ model: agentId, previous_response_id: asked.id, input: [{ type: 'function_call_output', call_id: 'call_other', output: 'x' }], tools })).rejects.toMatchObject({ status: 400, param: 'input[0].call_id' });
    await expect(client.responses.create({ model: agentId, previous_response_id: answered.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'x' }], tools })).rejects.toMatchObject({ status: 400, param: 'input[0].call_id' });
  });

  it('retrieves and deletes a stored response by its id; a reply has one id (its message’s is cairn.messageId)', async () => {
    const stored = await client.responses.create({ model: agentId, input: 'My parcel number is 4417.' });
    const cairn = (stored as unknown as { cairn: { messageId: string; sessionId: string } }).cairn;
    expect(stored.output[0]!.id).toBe(cairn.messageId);
    const again = await client.responses.retrieve(stored.id);
    expect(again).toMatchObject({ id: stored.id, object: 'response', status: 'completed', output: stored.output, usage: stored.usage });
    expect(again.created_at).toBe(stored.created_at);
    // Streamed, the message's id is the stored reply's from the first event on.
    const events = [];
    for await (const e of await client.responses.create({ model: agentId, previous_response_id: stored.id, input: 'And its number again?', stream: true })) events.push(e);
    const added = events.find((e) => e.type === 'response.output_item.added') as { item: { id: string } };
    const completed = events.find((e) => e.type === 'response.completed') as unknown as { response: { cairn: { messageId: string } } };
    expect(added.item.id).toBe(completed.response.cairn.messageId);
    expect(await client.responses.delete(stored.id)).toMatchObject({ id: stored.id, object: 'response', deleted: true });
    await expect(client.responses.retrieve(stored.id)).rejects.toMatchObject({ status: 404 });
    const listed = (await call_(`/v1/agents/${agentId}/sessions/${cairn.sessionId}/messages`)).body.data as Array<{ content: string }>;
    expect(listed.map((m) => m.content)).not.toContain('My parcel number is 4417.');
    const unstored = await client.responses.create({ model: agentId, input: 'Nothing kept.', store: false });
    await expect(client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.retrieve('resp_nope')).rejects.toMatchObject({ status: 404 });
    const other = clientFor((await newTenant()).apiKey);
    await expect(other.responses.retrieve(again.id)).rejects.toMatchObject({ status: 404 });
  });

  it('honours max_tokens, max_completion_tokens and stop', async () => {
    const ask = { model: agentId, messages: [{ role: 'user' as const, content: 'My parcel number is 4417 and it left Lyon on Monday. Where is it now?' }] };
    const full = await client.chat.completions.create(ask);
    const words = full.choices[0]!.message.content!.split(' ');
    expect(words.length).toBeGreaterThan(3);
    // max_tokens is a ceiling on completion_tokens: the reply is cut at the last word that fits.
    const short = await client.chat.completions.create({ ...ask, max_tokens: 3 });
    expect(short.usage!.completion_tokens).toBeLessThanOrEqual(3);
    expect(full.choices[0]!.message.content!.startsWith(short.choices[0]!.message.content!)).toBe(true);
    expect(short.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(short.choices[0]!.finish_reason).toBe('length');
    const newer = await client.chat.completions.create({ ...ask, max_completion_tokens: 2 });
    expect(newer.usage!.completion_tokens).toBeLessThanOrEqual(2);
    expect(newer.choices[0]!.finish_reason).toBe('length');
    const stopWord = words[2]!;
    const stopped = await client.chat.completions.create({ ...ask, stop: [stopWord] });
    expect(stopped.choices[0]!.message.content).toBe(full.choices[0]!.message.content!.slice(0, full.choices[0]!.message.content!.indexOf(stopWord)).trimEnd());
    expect(stopped.choices[0]!.finish_reason).toBe('stop');
  });

  it('refuses what it cannot honour with OpenAI’s error body naming the parameter', async () => {
    const ask = { model: agentId, messages: [{ role: 'user' as const, content: 'hi' }] };
    for (const [param, extra] of [
      ['temperature', { temperature: 2.5 }],
      ['top_p', { top_p: 1.5 }],
      ['n', { n: 2 }],
      ['max_tokens', { max_tokens: 0 }],
      ['response_format.json_schema.schema', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'nonsense' } } } }],
      ['tools[0].function.name', { tools: [{ type: 'function', function: { name: 'bad name!', parameters: { type: 'object' } } }] }],
    ] as const) {
      const refused = await client.chat.completions.create({ ...ask, ...extra } as Parameters<typeof client.chat.completions.create>[0]).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused, param).toMatchObject({ status: 400, param, type: 'invalid_request_error' });
    }
    // Without a key: OpenAI's authentication error.
    await expect(clientFor('cak_wrong_key_000000000000').models.list()).rejects.toMatchObject({ status: 401, type: 'authentication_error', code: 'invalid_api_key' });
  });

  it('returns calls of the caller’s own tools as tool_calls, and answers from the results sent back', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      },
    ];
    const question = { role: 'user' as const, content: 'What is the weather in "Paris" right now?' };
    const first = await client.chat.completions.create({ model: agentId, messages: [question], tools });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });

    const second = await client.chat.completions.create({
      model: agentId,
      tools,
      messages: [question, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"city":"Paris","sky":"sunny","celsius":21}' }],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toContain('sky: sunny');

    // Streamed, the call arrives as a tool_calls delta.
    const stream = await client.chat.completions.create({ model: agentId, messages: [question], tools, stream: true });
    const deltas: unknown[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.tool_calls) deltas.push(...chunk.choices[0].delta.tool_calls);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    // As OpenAI sends one: the call's id, type and name with empty arguments first, then the arguments by index.
    expect(deltas).toEqual([
      expect.objectContaining({ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '' } }),
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
    ]);
    // The SDK's own accumulator puts them back together.
    const helper = client.chat.completions.stream({ model: agentId, messages: [question], tools });
    const final = await helper.finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls).toEqual([expect.objectContaining({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } })]);
    expect(finish).toBe('tool_calls');

    // tool_choice none: no call; a tool message without its call: 400 naming it.
    const none = await client.chat.completions.create({ model: agentId, messages: [question], tools, tool_choice: 'none' });
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    await expect(client.chat.completions.create({ model: agentId, messages: [question, { role: 'tool', tool_call_id: 'nope', content: 'x' }] })).rejects.toMatchObject({ status: 400, param: 'messages[1].tool_call_id' });
  });

  it('answers in JSON when response_format asks for it', async () => {
    const json = await client.chat.completions.create({ model: agentId, messages: [{ role: 'user', content: 'My parcel left Lyon on Monday.' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ answer: expect.any(String) });
  });

  it('answers a browser’s CORS preflight before any key is asked for, and exposes the API’s headers', async () => {
    const preflight = await app.request('http://cairn.test/v1/chat/completions', {
      method: 'OPTIONS',
      headers: { origin: 'https://console.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    // The headers browser SDKs add of their own (the OpenAI SDK's x-stainless-*, the MCP SDK's) are echoed.
    const sdk = await app.request('http://cairn.test/v1/chat/completions', {
      method: 'OPTIONS',
      headers: { origin: 'https://console.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-stainless-os,x-stainless-retry-count,mcp-protocol-version,mcp-session-id' },
    });
    expect(sdk.headers.get('access-control-allow-headers')?.toLowerCase().split(/\s*,\s*/)).toEqual(expect.arrayContaining(['x-stainless-os', 'x-stainless-retry-count', 'mcp-protocol-version', 'mcp-session-id']));
    const agentsPreflight = await app.request('http://cairn.test/v1/agents', { method: 'OPTIONS', headers: { origin: 'https://console.example', 'access-control-request-method': 'GET' } });
    expect(agentsPreflight.status).toBe(204);
    const real = await app.request('http://cairn.test/v1/agents', { headers: { origin: 'https://console.example', 'x-api-key': t.apiKey } });
    expect(real.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(real.headers.get('access-control-expose-headers')).toContain('X-RateLimit-Remaining');
    // An origin not in CORS_ORIGINS gets no CORS headers: the browser refuses the response.
    const stranger = await app.request('http://cairn.test/v1/agents', { headers: { origin: 'https://evil.example', 'x-api-key': t.apiKey } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });
});
