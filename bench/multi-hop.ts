/**
 * Multi-hop answers and their citations, end to end through the API: each question of
 * bench/datasets/multi-hop.json gets a file collection of ten paragraphs (its two supporting ones
 * and the eight others of the pool that share most words with it, as HotpotQA's distractor setting
 * picks them), an agent on the built-in engine answers it, and the reply's `sources` are scored
 * against the two supporting paragraphs: citation precision and recall (over all citations), and
 * how often the reply names the answer. Writes bench/results/multi-hop.json.
 * Usage: npx tsx bench/multi-hop.ts   (VERBOSE=1 prints each reply)
 */
import { readFileSync } from 'node:fs';
import { benchApp, runBench, startBenchServices, writeResults } from './common';

interface Paragraph {
  title: string;
  text: string;
}
interface Question {
  question: string;
  answers: string[];
  type: string;
  supporting: string[];
}
const data = JSON.parse(readFileSync(new URL('./datasets/multi-hop.json', import.meta.url), 'utf8')) as { paragraphs: Paragraph[]; questions: Question[] };

const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
const COMMON = wordsOf('the a an of in on at to and or is was were which who what where when how did does by for with from');

/** The question's ten paragraphs: its supporting two, then the eight others sharing most (non-common) words with it. */
function contextOf(q: Question): Paragraph[] {
  const asked = [...wordsOf(q.question)].filter((w) => !COMMON.has(w));
  const supporting = data.paragraphs.filter((p) => q.supporting.includes(p.title));
  const others = data.paragraphs
    .filter((p) => !q.supporting.includes(p.title))
    .map((p, i) => ({ p, shared: asked.filter((w) => wordsOf(`${p.title} ${p.text}`).has(w)).length, i }))
    .sort((a, b) => b.shared - a.shared || a.i - b.i)
    .slice(0, 8)
    .map((x) => x.p);
  return [...supporting, ...others];
}

const fileName = (title: string) => `${title.replace(/[^\w]+/g, '-')}.md`;

async function main() {
  const services = await startBenchServices('cairn-bench-multihop');
  const { call, local } = await benchApp('ten_multihop');
  let cited = 0;
  let citedSupporting = 0;
  let supportingFound = 0;
  let supportingTotal = 0;
  let answered = 0;
  const byType: Record<string, { questions: number; answered: number }> = {};
  const started = performance.now();
  for (const q of data.questions) {
    const files = contextOf(q).map((p) => ({ path: fileName(p.title), content: `# ${p.title}\n\n${p.text}\n` }));
    const source = await call('POST', '/v1/knowledge-sources', { name: q.question.slice(0, 60), type: 'file-collection', files });
    await call('POST', `/v1/knowledge-sources/${source.data.id}/connect`, {});
    await local.ingestion!.drain();
    const agent = await call('POST', '/v1/agents', { name: 'Reader', model: 'local/built-in', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [source.data.id] });
    const turn = (await call('POST', `/v1/agents/${agent.data.id}/converse`, { message: q.question })).data as unknown as { reply: string; sources: Array<{ path?: string }> };
    const gold = new Set(q.supporting.map(fileName));
    const paths = [...new Set(turn.sources.map((s) => s.path ?? ''))];
    cited += paths.length;
    citedSupporting += paths.filter((p) => gold.has(p)).length;
    supportingFound += [...gold].filter((p) => paths.includes(p)).length;
    supportingTotal += gold.size;
    const reply = turn.reply.replace(/\[\d+\]/g, '').toLowerCase();
    const ok = q.answers.some((a) => new RegExp(`\\b${a.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(reply));
    if (ok) answered++;
    byType[q.type] ??= { questions: 0, answered: 0 };
    byType[q.type]!.questions++;
    if (ok) byType[q.type]!.answered++;
    if (process.env.VERBOSE) process.stdout.write(`${ok ? 'ok  ' : 'MISS'} ${q.question}\n     cites ${paths.join(', ')}\n     ${turn.reply.replace(/\n/g, ' ').slice(0, 400)}\n`);
  }
  const pct = (a: number, b: number) => Math.round((1000 * a) / Math.max(1, b)) / 10;
  writeResults('multi-hop', {
    date: new Date().toISOString(),
    questions: data.questions.length,
    citationsPerReply: Math.round((100 * cited) / data.questions.length) / 100,
    citationPrecisionPct: pct(citedSupporting, cited),
    citationRecallPct: pct(supportingFound, supportingTotal),
    answerInReplyPct: pct(answered, data.questions.length),
    byType: Object.fromEntries(Object.entries(byType).map(([type, t]) => [type, { questions: t.questions, answerInReplyPct: pct(t.answered, t.questions) }])),
    msPerQuestion: Math.round((performance.now() - started) / data.questions.length),
  });
  await local.stop();
  await services.stop();
}

runBench(main);
