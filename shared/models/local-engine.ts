import { analyze } from '../search/analyzer';
import { CATEGORY_WORDS } from './category-words';
import { approximateTokens, type ChatModel, type ChatRequest, type ChatResult } from './types';
import { answerFromTools, decideToolCall } from './local-tools';
import { fillSchema } from './structured-output';
import { composeAnswer, gatherEvidence, jointCoverage, sentencesOf } from './local-answer';

/**
 * The built-in offline engine. It never invents: with passages it answers from them as
 * `local-answer.ts` composes it, each statement cited [n]; it also remembers what the user said
 * earlier in the session and the facts remembered about them; otherwise it says what it cannot do.
 * Deterministic: same input, same reply.
 */
const GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening)|bonjour|hallo|hola)\b/i;
const ABOUT = /\b(who are you|what can you do|what do you do|help me|how can you help|what are you)\b/i;
const THANKS = /^\s*(thanks|thank you|merci|cheers)\b/i;
/** A message that tells rather than asks ("I prefer express shipping."): acknowledged, not searched for. */
const STATEMENT = /^\s*(i|i'm|i am|i've|my|we|we're|our)\b[^?]*[.!]?\s*$/i;

const VERBS: Record<string, string> = { prefers: 'prefer', likes: 'like', dislikes: 'dislike', uses: 'use', wants: 'want', has: 'have', drives: 'drive', eats: 'eat', lives: 'live', works: 'work', ordered: 'ordered', is: 'are', allergic_to: 'are allergic to' };

/** "user prefers express shipping" → "you prefer express shipping"; "user's name is Dana" → "your name is Dana". */
function secondPerson(fact: string): string {
  if (fact.startsWith("user's ")) return `your ${fact.slice(7)}`;
  if (!fact.startsWith('user ')) return fact;
  const [verb, ...rest] = fact.slice(5).split(' ') as [string, ...string[]];
  return `you ${VERBS[verb] ?? verb} ${rest.join(' ')}`;
}

/** What the user said in the summary of a compacted session: its `User:` lines, or the whole of a summary a model wrote. */
const summarizedSaying = (summary: string | undefined) =>
  (summary ?? '')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('Assistant: '))
    .map((line) => line.replace(/^User: /, ''));

/** What the user said earlier in the session, and the facts remembered about them, as sentences a reply can use. */
function remembered(request: ChatRequest): Array<{ text: string; remembered: boolean }> {
  const earlier = [...summarizedSaying(request.summary), ...request.messages.slice(0, -1).filter((m) => m.role === 'user').map((m) => m.content)];
  return [
    ...earlier.flatMap((said) => sentencesOf(said.replace(/\s+/g, ' ')).map((text) => ({ text, remembered: false }))),
    ...(request.memory ?? []).map((fact) => ({ text: secondPerson(fact), remembered: true })),
  ];
}

/**
 * Evidence is enough to answer from when it covers a third of the question's weight and names two
 * of its words (or its only one): one word alone (a "size" in a question about the default chunk
 * size) is not an answer.
 */
const ANSWERABLE = 0.34;
const answerable = (evidence: { best: number; named: number; asked: number }) => evidence.best >= ANSWERABLE && evidence.named >= Math.min(2, evidence.asked);

/** Evidence in two halves (a bridge question's): no sentence is enough alone, the sentences the hop joins cover most of the question. */
const BRIDGED = 0.6;
const bridged = (question: string, passages: ChatRequest['passages'] & object, evidence: ReturnType<typeof gatherEvidence>) =>
  evidence.best >= ANSWERABLE / 2 && evidence.named >= 2 && jointCoverage(question, passages, evidence) >= BRIDGED;

export function localAnswer(request: ChatRequest): string {
  const messages = request.messages;
  const question = messages[messages.length - 1]?.content ?? '';
  const asked = new Set(analyze(question));
  const passages = request.passages ?? [];
  const evidence = gatherEvidence(question, passages, asked);
  // What the user told us competes with the passages on the same measure.
  const told = remembered(request);
  const recall = told.length > 0 ? gatherEvidence(question, told.map((t) => ({ title: '', text: t.text })), asked) : undefined;
  if (recall && answerable(recall) && recall.best > evidence.best) {
    const best = recall.ranked[0]!;
    const chosen = recall.ranked.filter((u) => u.score >= best.score * 0.6).slice(0, 3);
    return chosen
      .map((u) => (told[u.passage]!.remembered ? `I remember from an earlier conversation that ${u.text}.` : `You told me earlier: "${u.text}"`))
      .join(' ');
  }
  if (answerable(evidence) || bridged(question, passages, evidence)) return composeAnswer(question, passages, evidence);
  const name = request.agent?.name ?? 'an assistant';
  if (GREETING.test(question)) {
    return `Hello! I'm ${name}.${request.agent?.description ? ` ${request.agent.description}.` : ''} Ask me a question and I'll answer from the knowledge I'm connected to.`;
  }
  if (THANKS.test(question)) return "You're welcome.";
  if (STATEMENT.test(question)) return "Noted — I'll keep that in mind.";
  if (ABOUT.test(question)) {
    return request.passages !== undefined
      ? `I'm ${name}. I answer questions from the documents and tables connected to me, quoting the passages I rely on.`
      : `I'm ${name}. I run on Cairn's built-in offline engine: I can greet you and remember what you tell me in this conversation, and I answer from knowledge sources once they are connected to me.`;
  }
  if (request.passages !== undefined) {
    // Say what was searched, so a miss can be told from a knowledge gap.
    const closest = passages[0]?.title;
    return `I couldn't find anything about that in the connected knowledge${passages.length === 0 ? ': no passage matched the question' : `: the ${passages.length} closest passages${closest ? ` (the first from “${closest}”)` : ''} do not answer it`}.`;
  }
  const unsearched = request.agent?.unsearchedSources ?? 0;
  if (unsearched > 0) {
    return `I can't answer that from my knowledge: this agent lists ${unsearched} knowledge source${unsearched === 1 ? '' : 's'} but lacks the "document-search" capability, so it does not search them. Add "document-search" to its capabilities.`;
  }
  return "I can't answer that: no knowledge source is connected to me, and Cairn's built-in offline engine only answers from connected knowledge and from what you've told me in this conversation.";
}

/** CATEGORY_WORDS by the analyzed form of their key, as a category's own terms are. */
const RELATED_WORDS = new Map(Object.entries(CATEGORY_WORDS).map(([word, related]) => [analyze(word)[0] ?? word, related]));

/** Names a catch-all category goes by: without evidence for any category, the input is one of these. */
const CATCH_ALL = new Set(['other', 'others', 'misc', 'miscellaneous', 'general', 'unknown', 'none', 'unclassified']);

/**
 * Lexical classification for workflows: the category whose name, description and examples share
 * most with the input, a category's name also standing for the words people use for it
 * (`category-words.ts`, weighed less than its own). Without evidence for any, the `fallback`
 * category (else one named as a catch-all, e.g. `other`; else the first) with the low confidence
 * of a guess among all.
 */
export function classifyLocally(input: string, categories: Array<{ name: string; description?: string; examples?: string[] }>, fallback?: string) {
  const asked = new Set(analyze(input));
  const raw = categories.map((c) => {
    const own = new Set(analyze([c.name, c.description ?? '', ...(c.examples ?? [])].join(' ')));
    const related = new Set(analyze([...own].map((t) => RELATED_WORDS.get(t) ?? '').join(' ')));
    let overlap = 0;
    for (const t of asked) overlap += own.has(t) ? 1 : related.has(t) ? 0.7 : 0;
    return { name: c.name, score: own.size === 0 ? 0 : overlap / Math.sqrt(own.size * Math.max(1, asked.size)) };
  });
  const total = raw.reduce((s, c) => s + c.score, 0);
  const scores = Object.fromEntries(raw.map((c) => [c.name, total > 0 ? c.score / total : 1 / raw.length]));
  const winner = total > 0 ? raw.reduce((a, b) => (b.score > a.score ? b : a)) : (raw.find((c) => c.name === fallback) ?? raw.find((c) => CATCH_ALL.has(c.name.toLowerCase())) ?? raw[0]!);
  return { category: winner.name, confidence: scores[winner.name]!, scores };
}

function result(request: ChatRequest, answer: string): ChatResult {
  if (request.responseFormat) answer = JSON.stringify(fillSchema(request, answer, request.responseFormat));
  // A stop sequence ends the reply before it, as a model's would.
  const stopAt = Math.min(...(request.stop ?? []).map((s) => answer.indexOf(s)).filter((i) => i >= 0));
  const text = Number.isFinite(stopAt) ? answer.slice(0, stopAt).trimEnd() : answer;
  // max_tokens is a ceiling on the tokens counted (4 characters a token): cut at the last word that fits.
  const room = request.maxTokens * 4;
  const clipped = text.length <= room ? text : text.slice(0, room).replace(/\s+\S*$/, '') || text.slice(0, room);
  const input = request.messages.map((m) => m.content).join(' ') + (request.passages ?? []).map((p) => p.text).join(' ');
  return {
    text: clipped,
    usage: { inputTokens: approximateTokens(input), outputTokens: approximateTokens(clipped) },
    finishReason: clipped === text ? 'stop' : 'length',
  };
}

/** With tools: a call to make, a question for a missing argument, or the answer from what the tools returned. */
function toolStep(request: ChatRequest): ChatResult | undefined {
  if (!request.tools?.length) return undefined;
  if (request.toolRounds?.length) return result(request, answerFromTools(request));
  const decision = decideToolCall(request, () => localAnswer(request));
  if (!decision) return undefined;
  if ('ask' in decision) return result(request, decision.ask);
  return { text: '', usage: { inputTokens: approximateTokens(request.messages.map((m) => m.content).join(' ')), outputTokens: 0 }, finishReason: 'tool_calls', toolCalls: decision.calls };
}

export const localEngine: ChatModel = {
  provider: 'local',
  supportsTools: true,
  async generate(request) {
    return toolStep(request) ?? result(request, localAnswer(request));
  },
  async *stream(request) {
    const final = toolStep(request) ?? result(request, localAnswer(request));
    // Word by word, as a model would stream.
    for (const piece of final.text.match(/\S+\s*/g) ?? []) yield piece;
    return final;
  },
};
