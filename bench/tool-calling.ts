/**
 * `npm run bench` (tool calling): the built-in engine's tool calls on bench/datasets/tool-calls.jsonl
 * — messages as people write them, each with the tools offered and the call it should make (or
 * `ask` for a question back, `none` when no tool fits) — scored on the tool and every expected
 * argument; and the engine's time per decision, against the search analyzer on the same message.
 * Writes bench/results/tool-calling.json.
 */
import { readFileSync } from 'node:fs';
import { decideToolCall } from '../shared/models/local-tools';
import type { ToolSpec } from '../shared/models/types';
import { analyze } from '../shared/search/analyzer';
import { runBench, writeResults } from './common';

const TOOLS: Record<string, ToolSpec> = {
  weather: { name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string', description: 'The city' } }, required: ['city'] } },
  convert: {
    name: 'convert_currency',
    description: 'Converts an amount of money between currencies',
    parameters: { type: 'object', properties: { amount: { type: 'number' }, from: { type: 'string', enum: ['USD', 'EUR', 'GBP', 'JPY'] }, to: { type: 'string', enum: ['USD', 'EUR', 'GBP', 'JPY'] } }, required: ['amount', 'from', 'to'] },
  },
  order: { name: 'order_status', description: 'Looks up the delivery status of an order', parameters: { type: 'object', properties: { orderId: { type: 'string', description: 'The order number' } }, required: ['orderId'] } },
  triangle: { name: 'triangle_area', description: 'Area of a triangle', parameters: { type: 'object', properties: { base: { type: 'number' }, height: { type: 'number' } }, required: ['base', 'height'] } },
  book: {
    name: 'book_table',
    description: 'Books a table at a restaurant',
    parameters: { type: 'object', properties: { restaurant: { type: 'string', description: 'The restaurant' }, people: { type: 'integer', description: 'How many people' }, date: { type: 'string', format: 'date' } }, required: ['restaurant', 'people'] },
  },
  email: { name: 'send_email', description: 'Sends an email', parameters: { type: 'object', properties: { to: { type: 'string', format: 'email' }, body: { type: 'string', description: 'The text of the message' } }, required: ['to', 'body'] } },
  todo: { name: 'add_todo', description: 'Adds an item to the to-do list', parameters: { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] } },
  stars: { name: 'star_history', description: 'Star history of GitHub repositories', parameters: { type: 'object', properties: { repos: { type: 'string', description: 'owner/repo, comma-separated' }, aligned: { type: 'boolean' } }, required: ['repos'] } },
  thermostat: {
    name: 'set_thermostat',
    description: 'Sets the thermostat temperature',
    parameters: { type: 'object', properties: { temperature: { type: 'number' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['temperature'] },
  },
  multiply: { name: 'multiply', description: 'Multiplies two integers', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } },
};

interface Case {
  message: string;
  /** The named tools above, or a tool given whole. */
  tools: Array<string | ToolSpec>;
  expect: 'ask' | 'none' | { name: string; arguments: Record<string, unknown>; calls?: number };
}

async function main() {
  const cases = readFileSync('bench/datasets/tool-calls.jsonl', 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Case);
  const request = (c: Case) => ({ model: 'local', now: Date.now(), messages: [{ role: 'user' as const, content: c.message }], temperature: 0, maxTokens: 256, tools: c.tools.map((t) => (typeof t === 'string' ? TOOLS[t]! : t)) });
  const misses: string[] = [];
  let right = 0;
  for (const c of cases) {
    const decision = decideToolCall(request(c));
    const got = !decision ? 'none' : 'ask' in decision ? 'ask' : decision.calls;
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const ok =
      typeof c.expect === 'string'
        ? got === c.expect
        : Array.isArray(got) &&
          got.length === (c.expect.calls ?? 1) &&
          got[0]!.name === c.expect.name &&
          Object.entries(c.expect.arguments).every(([k, v]) => same(got[0]!.arguments?.[k], v)) &&
          // No argument the expectation does not name, but a date said in words.
          Object.keys(got[0]!.arguments ?? {}).every((k) => k in (c.expect as { arguments: object }).arguments || k === 'date');
    if (ok) right++;
    else misses.push(`${c.message} → ${JSON.stringify(got)}`);
  }
  // Time per decision, beside the analyzer reading the same messages.
  const time = (fn: () => unknown, rounds: number) => {
    for (let i = 0; i < 50; i++) fn();
    const started = performance.now();
    for (let i = 0; i < rounds; i++) fn();
    return (performance.now() - started) / rounds;
  };
  const perDecisionMs = time(() => cases.forEach((c) => decideToolCall(request(c))), 200) / cases.length;
  const analyzerMs = time(() => cases.forEach((c) => analyze(c.message)), 200) / cases.length;
  const round = (n: number) => Math.round(n * 1000) / 1000;
  writeResults('tool-calling', { date: new Date().toISOString(), cases: cases.length, right, accuracy: round(right / cases.length), misses, perDecisionMs: round(perDecisionMs), analyzerMs: round(analyzerMs), target: 'perDecisionMs < 2' });
}

runBench(main);
