/**
 * `npm run bench` (guardrails): detection quality on a labelled set (bench/datasets/pii.jsonl: 310
 * texts, 210 with personal values and 100 hard negatives — Luhn-invalid cards, order numbers, dates,
 * versions, prices, IBANs with a wrong checksum), precision and recall per entity; and what the
 * guardrails cost a turn: a 2 KB message checked and protected and a 2 KB reply checked, with every
 * entity, three denied topics and twenty blocked words, beside the search analyzer on the same text.
 * Writes bench/results/guardrails.json.
 */
import { readFileSync } from 'node:fs';
import { findPii, Guard, PII_ENTITIES } from '../shared/guardrails';
import { analyze } from '../shared/search/analyzer';
import { runBench, writeResults } from './common';

interface Example {
  text: string;
  entities: Array<{ entity: string; value: string }>;
}

async function main() {
  const examples = readFileSync('bench/datasets/pii.jsonl', 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Example);
  const counts = Object.fromEntries(PII_ENTITIES.map((e) => [e, { tp: 0, fp: 0, fn: 0 }]));
  const misses: string[] = [];
  for (const ex of examples) {
    const found = findPii(ex.text, PII_ENTITIES).map((m) => `${m.entity}|${m.value}`);
    const want = ex.entities.map((e) => `${e.entity}|${e.value}`);
    for (const f of found) {
      const entity = f.split('|')[0]!;
      if (want.includes(f)) counts[entity]!.tp++;
      else {
        counts[entity]!.fp++;
        misses.push(`false positive ${f} in: ${ex.text}`);
      }
    }
    for (const w of want) {
      if (!found.includes(w)) {
        counts[w.split('|')[0]!]!.fn++;
        misses.push(`missed ${w} in: ${ex.text}`);
      }
    }
  }
  const round = (n: number) => Math.round(n * 1000) / 1000;
  const quality = Object.fromEntries(
    Object.entries(counts).map(([entity, c]) => [entity, { ...c, precision: c.tp + c.fp === 0 ? null : round(c.tp / (c.tp + c.fp)), recall: c.tp + c.fn === 0 ? null : round(c.tp / (c.tp + c.fn)) }]),
  );

  // A 2 KB message with a few values in it, and a 2 KB reply.
  const filler = 'The parcel left the warehouse on Monday and the courier says it should arrive within three working days unless the weather delays it. ';
  const message = `${filler.repeat(7)}Please refund card 4111 1111 1111 1111 and email ana.silva@example.com or call +44 20 7946 0958. ${filler.repeat(7)}`.slice(0, 2048);
  const reply = `${filler.repeat(8)}I have written to <EMAIL_1> about it. ${filler.repeat(7)}`.slice(0, 2048);
  const settings = {
    pii: { entities: [...PII_ENTITIES], action: 'tokenize' as const },
    deniedTopics: [
      { name: 'investment advice', phrases: ['which stocks', 'buy crypto', 'investment tips'] },
      { name: 'medical advice', phrases: ['diagnose my', 'which medication'] },
      { name: 'legal advice', phrases: ['sue my employer', 'legal advice'] },
    ],
    blockedWords: Array.from({ length: 20 }, (_, i) => `forbiddenword${i}`),
  };
  const turn = () => {
    const guard = new Guard(settings);
    guard.checkMessage(message);
    guard.protect(message, 'input');
    return guard.checkOutput(reply);
  };
  const time = (fn: () => unknown, n: number) => {
    for (let i = 0; i < 200; i++) fn();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    return (performance.now() - t0) / n;
  };
  const turnMs = time(turn, 3000);
  const analyzerMs = time(() => analyze(message), 3000);
  const results = {
    date: new Date().toISOString(),
    examples: examples.length,
    withValues: examples.filter((e) => e.entities.length > 0).length,
    negatives: examples.filter((e) => e.entities.length === 0).length,
    quality,
    misses: misses.slice(0, 20),
    costPerTurn: { messageBytes: Buffer.byteLength(message), replyBytes: Buffer.byteLength(reply), guardMs: round(turnMs), analyzerMs: round(analyzerMs), guardOverAnalyzer: round(turnMs / analyzerMs) },
  };
  writeResults('guardrails', results);
}

runBench(main);
