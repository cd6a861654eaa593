/**
 * `npm run bench`: what memory costs a provider-backed turn. An OpenAI-compatible stand-in answers
 * every call after a fixed delay (a real provider's latency, here 80 ms); the same conversations run
 * against an agent whose memory is `rules` and one whose memory is `model`, taking turns. Per mode:
 * the converse latency the caller sees and the model calls per turn (the turn's own, and for `model`
 * the queued extraction's), and how long the last extractions took to drain after the last answer.
 * Writes bench/results/memory.json.
 */
import { createServer } from 'node:http';
import { benchApp, mean, percentile, runBench, standInModels, startBenchServices, writeResults } from './common';

const TURNS = Number(process.env.BENCH_MEMORY_TURNS ?? 60);
const PROVIDER_MS = 80;

const SAID = ['I live in Lisbon.', 'I prefer express shipping.', 'My name is Dana.', 'I work at Acme.', 'I like green tea.', 'I ordered a bicycle.'];

async function main() {
  await startBenchServices('cairn-bench');
  // Calls by kind: the turns' (by the agent named in their system prompt) and the extractions'.
  const calls = { memory: 0, byAgent: {} as Record<string, number> };
  const provider = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const memory = raw.includes('You extract long-term memory');
      if (memory) calls.memory++;
      else for (const mode of ['rules', 'model']) if (raw.includes(`the ${mode} agent`)) calls.byAgent[mode] = (calls.byAgent[mode] ?? 0) + 1;
      const content = memory ? '{"entities":[],"facts":[{"relation":"likes","object":{"label":"green tea","type":"concept"},"negated":false}]}' : 'Noted.';
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: memory ? 200 : 60, completion_tokens: memory ? 30 : 3, total_tokens: 0 } }),
        );
      }, PROVIDER_MS);
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const { call, local: runtime } = await benchApp('ten_memorybench', { models: await standInModels(provider) });

  // The two agents take turns, so neither is measured on a colder or busier process than the other.
  const modes = ['rules', 'model'] as const;
  const agents = Object.fromEntries(await Promise.all(modes.map(async (mode) => [mode, (await call('POST', '/v1/agents', { name: `memory ${mode}`, model: 'openai/gpt-4o', instructions: `You are the ${mode} agent.`, memory: { mode } })).data.id] as const)));
  const latency: Record<string, number[]> = { rules: [], model: [] };
  for (let i = 0; i < TURNS + 10; i++) {
    for (const mode of modes) {
      const t0 = performance.now();
      await call('POST', `/v1/agents/${agents[mode]}/converse`, { message: SAID[i % SAID.length], context: { userId: `${mode}-u${i % 10}` } });
      const elapsed = performance.now() - t0;
      if (i < 10) continue; // warm-up
      latency[mode]!.push(elapsed);
    }
  }
  const t0 = performance.now();
  await runtime.workflowSteps!.drain();
  const drainMs = performance.now() - t0;
  const results = Object.fromEntries(
    modes.map((mode) => [
      mode,
      { turns: TURNS, latencyMs: { p50: percentile(latency[mode]!, 0.5), p95: percentile(latency[mode]!, 0.95), mean: mean(latency[mode]!) } },
    ]),
  );
  const turnsEach = TURNS + 10;
  writeResults('memory', {
    date: new Date().toISOString(),
    providerDelayMs: PROVIDER_MS,
    ...results,
    modelCallsPerTurn: { rules: Math.round(((calls.byAgent.rules ?? 0) / turnsEach) * 100) / 100, model: Math.round((((calls.byAgent.model ?? 0) + calls.memory) / turnsEach) * 100) / 100 },
    extractionsPerModelTurn: Math.round((calls.memory / turnsEach) * 100) / 100,
    queuedExtractionsDrainedAfterTheLastAnswerMs: Math.round(drainMs),
    modelVsRulesLatencyP50: Math.round(((results.model!.latencyMs.p50) / results.rules!.latencyMs.p50) * 100) / 100,
  });
  await runtime.stop();
  provider.close();
}

runBench(main);
