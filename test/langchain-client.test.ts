import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant } from './helpers/tenant';

/** LangChain's ChatOpenAI against the OpenAI-compatible surface, as a LangChain app would use Cairn. */
const app = createLocalApp(testRt);

describe('LangChain’s ChatOpenAI against Cairn', () => {
  let model: ChatOpenAI;
  beforeAll(async () => {
    const t = await newTenant();
    const agentId = (await call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'Helper', model: 'gpt-4' } })).body.data.id as string;
    model = new ChatOpenAI({
      model: agentId,
      apiKey: t.apiKey,
      maxRetries: 0,
      configuration: { baseURL: 'http://cairn.test/v1', fetch: async (url: string | URL | Request, init?: RequestInit) => app.request(url instanceof Request ? url : url.toString(), init) },
    });
  });

  it('answers, honours maxTokens, and streams', async () => {
    const question = 'My parcel number is 4417 and it left Lyon on Monday. Where is it?';
    const full = await model.invoke(question);
    expect(full.text.split(' ').length).toBeGreaterThan(3);
    const capped = await new ChatOpenAI({
      model: model.model,
      apiKey: model.apiKey,
      maxTokens: 3,
      maxRetries: 0,
      configuration: model.clientConfig,
    }).invoke(question);
    expect(capped.usage_metadata!.output_tokens).toBeLessThanOrEqual(3);
    expect(full.text.startsWith(capped.text)).toBe(true);
    expect(capped.text.length).toBeLessThan(full.text.length);
    let text = '';
    for await (const chunk of await model.stream(question)) text += chunk.text;
    expect(text).toBe(full.text);
  });

  it('round-trips a bound tool', async () => {
    const withTools = model.bindTools([
      { type: 'function', function: { name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    ]);
    const ask = new HumanMessage('What is the weather in "Rome"?');
    const first = await withTools.invoke([ask]);
    expect(first.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Rome' } })]);
    const second = await withTools.invoke([ask, first, new ToolMessage({ tool_call_id: first.tool_calls![0]!.id!, content: '{"city":"Rome","sky":"cloudy"}' })]);
    expect(second.text).toContain('sky: cloudy');
  });

  it('fills a structured output asked as a forced function call: every required argument, of its type', async () => {
    const schema = {
      title: 'Person',
      description: 'A person the text is about',
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer' },
        mood: { type: 'string', enum: ['happy', 'sad', 'neutral'] },
        verified: { type: 'boolean' },
        address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        tags: { type: 'array', items: { type: 'string' } },
        nickname: { type: 'string' },
      },
      required: ['name', 'age', 'mood', 'verified', 'address', 'tags'],
    };
    const structured = model.withStructuredOutput(schema, { method: 'functionCalling' });
    const person = (await structured.invoke('Ada is 36 years old and seems happy today.')) as Record<string, unknown>;
    expect(person).toMatchObject({ age: 36, mood: 'happy', verified: false, tags: [], address: { city: expect.any(String) } });
    expect(typeof person.name).toBe('string');
    expect(person).not.toHaveProperty('nickname'); // optional: given only when the message gives it
    // The JSON Schema way gives an object of the same shape.
    const viaJsonSchema = (await model.withStructuredOutput({ ...schema, properties: { answer: { type: 'string' } }, required: ['answer'] }, { method: 'jsonSchema' }).invoke('Ada is 36.')) as Record<string, unknown>;
    expect(typeof viaJsonSchema.answer).toBe('string');
  });
});
