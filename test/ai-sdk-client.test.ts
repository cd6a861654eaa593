import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/** The Vercel AI SDK's OpenAI-compatible provider, as an app built on it would use Cairn. */
const app = createLocalApp(testRt);

describe('the AI SDK against the OpenAI-compatible surface', () => {
  let cairn: ReturnType<typeof createOpenAICompatible>;
  let agentId: string;
  beforeAll(async () => {
    const t = await newTenant();
    agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Helper', model: 'gpt-4' } })).body.data.id;
    cairn = createOpenAICompatible({
      name: 'cairn',
      baseURL: 'http://cairn.test/v1',
      apiKey: t.apiKey,
      fetch: async (url, init) => app.request(url instanceof Request ? url : url.toString(), init),
    });
  });

  it('generates and streams text, honouring maxOutputTokens', async () => {
    const full = await generateText({ model: cairn(agentId), prompt: 'My parcel number is 4417 and it left Lyon on Monday. Where is it?' });
    expect(full.text.split(' ').length).toBeGreaterThan(3);
    const short = await generateText({ model: cairn(agentId), prompt: 'My parcel number is 4417 and it left Lyon on Monday. Where is it?', maxOutputTokens: 3 });
    // A ceiling on the output tokens: the reply is cut at the last word that fits.
    expect(short.usage.outputTokens).toBeLessThanOrEqual(3);
    expect(full.text.startsWith(short.text)).toBe(true);
    expect(short.finishReason).toBe('length');
    const streamed = streamText({ model: cairn(agentId), prompt: 'My parcel number is 4417 and it left Lyon on Monday. Where is it?' });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(full.text); // the built-in engine is deterministic: the same reply, streamed
  });

  it('round-trips a tool call: the SDK runs its tool and Cairn answers from the result', async () => {
    const calls: Array<{ city: string }> = [];
    const result = await generateText({
      model: cairn(agentId),
      prompt: 'What is the weather in "Paris" right now?',
      tools: {
        get_weather: tool({
          description: 'Current weather in a city',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          execute: async (input) => {
            calls.push(input);
            return { city: input.city, sky: 'sunny', celsius: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(result.steps[0]!.finishReason).toBe('tool-calls');
    expect(result.text).toContain('sky: sunny');
  });

  it('returns JSON for generateObject (JSON mode)', async () => {
    const { object } = await generateObject({
      model: cairn(agentId),
      prompt: 'My parcel left Lyon on Monday.',
      schema: jsonSchema<{ answer: string }>({ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] }),
    });
    expect(object.answer).toEqual(expect.any(String));
  });

  describe('through the Responses API (the default of @ai-sdk/openai)', () => {
    let openai: ReturnType<typeof createOpenAI>;
    const paths = new Set<string>();
    afterAll(() => {
      expect([...paths]).toEqual(['/v1/responses']);
    });
    beforeAll(async () => {
      const t = await newTenant();
      agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Helper', model: 'gpt-4' } })).body.data.id;
      openai = createOpenAI({
        baseURL: 'http://cairn.test/v1',
        apiKey: t.apiKey,
        fetch: async (url, init) => {
          paths.add(new URL(url instanceof Request ? url.url : url.toString()).pathname);
          return app.request(url instanceof Request ? url : url.toString(), init);
        },
      });
    });

    it('generates and streams text, and reports a cut reply as length', async () => {
      const prompt = 'My parcel number is 4417 and it left Lyon on Monday. Where is it?';
      const full = await generateText({ model: openai(agentId), prompt });
      expect(full.text.split(' ').length).toBeGreaterThan(3);
      const streamed = streamText({ model: openai(agentId), prompt });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe(full.text);
      const short = await generateText({ model: openai(agentId), prompt, maxOutputTokens: 3 });
      expect(short.usage.outputTokens).toBeLessThanOrEqual(3);
      expect(full.text.startsWith(short.text)).toBe(true);
      expect(short.finishReason).toBe('length');
    });

    it('round-trips a function tool, whole and streamed', async () => {
      const weather = () =>
        tool({
          description: 'Current weather in a city',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          execute: async (input) => ({ city: input.city, sky: 'sunny' }),
        });
      const whole = await generateText({ model: openai(agentId), prompt: 'What is the weather in "Oslo"?', tools: { get_weather: weather() }, stopWhen: stepCountIs(3) });
      expect(whole.steps[0]!.toolCalls.map((c) => c.input)).toEqual([{ city: 'Oslo' }]);
      expect(whole.text).toContain('sky: sunny');
      const streamed = streamText({ model: openai(agentId), prompt: 'What is the weather in "Oslo"?', tools: { get_weather: weather() }, stopWhen: stepCountIs(3) });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toContain('sky: sunny');
    });
  });
});
