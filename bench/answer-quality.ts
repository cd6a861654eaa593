/**
 * How often the built-in engine's answer holds the answer, on SQuAD v1.1 (Wikipedia paragraphs and
 * questions): each question is given its paragraph as the one passage, and counts when the reply's
 * first sentence (citations removed) contains one of the gold answers. In process, no server.
 * Usage: npx tsx bench/answer-quality.ts ../shared/data/squad/dev.json [limit]
 */
import { readFileSync } from 'node:fs';
import { localAnswer } from '../shared/models/local-engine';

const [file, limitArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx bench/answer-quality.ts <squad dev.json> [limit]');
const limit = Number(limitArg ?? 1000);
type Squad = { data: Array<{ title: string; paragraphs: Array<{ context: string; qas: Array<{ question: string; answers: Array<{ text: string }> }> }> }> };
const squad = JSON.parse(readFileSync(file, 'utf8')) as Squad;
let asked = 0;
let inFirst = 0;
let inReply = 0;
const started = performance.now();
outer: for (const article of squad.data) {
  for (const paragraph of article.paragraphs) {
    for (const qa of paragraph.qas) {
      if (asked >= limit) break outer;
      asked++;
      const reply = localAnswer({ model: 'x', now: Date.now(), messages: [{ role: 'user', content: qa.question }], passages: [{ title: article.title.replace(/_/g, ' '), text: paragraph.context }], temperature: 0, maxTokens: 1024 });
      const clean = reply.replace(/\[\d+\]/g, '').toLowerCase();
      const first = clean.split(/(?<=[.!?])\s+(?=[A-Z`*"(\d])/i)[0] ?? '';
      const gold = qa.answers.map((a) => a.text.toLowerCase());
      if (gold.some((g) => first.includes(g))) inFirst++;
      if (gold.some((g) => clean.includes(g))) inReply++;
    }
  }
}
const ms = performance.now() - started;
console.log(`SQuAD: ${asked} questions; answer in the first sentence ${((100 * inFirst) / asked).toFixed(1)}%, anywhere in the reply ${((100 * inReply) / asked).toFixed(1)}%; ${(ms / asked).toFixed(2)} ms per answer`);
