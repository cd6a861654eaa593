import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
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
    expect(short.text.split(' ')).toHaveLength(3);
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
});
