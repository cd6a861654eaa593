import { analyze } from '../search/analyzer';
import { approximateTokens, type ChatModel, type ChatRequest, type ChatResult } from './types';
import { answerFromTools, decideToolCall } from './local-tools';
import { fillSchema } from './structured-output';

/**
 * The built-in offline engine. It never invents: with passages it answers with the sentences that
 * best match the question, each cited [n]; it also remembers what the user said earlier in the
 * session; otherwise it says what it cannot do. Deterministic: same input, same reply.
 */
const SENTENCE = /[^.!?\n]+(?:[.!?]+|$)/g;
const GREETING = /^\s*(hi|hello|hey|good (morning|afternoon|evening)|bonjour|hallo|hola)\b/i;
const ABOUT = /\b(who are you|what can you do|what do you do|help me|how can you help|what are you)\b/i;
const THANKS = /^\s*(thanks|thank you|merci|cheers)\b/i;
/** A message that tells rather than asks ("I prefer express shipping."): acknowledged, not searched for. */
const STATEMENT = /^\s*(i|i'm|i am|i've|my|we|we're|our)\b[^?]*[.!]?\s*$/i;

interface Candidate {
  text: string;
  /** 1-based passage number, or 0 for something the user said earlier. */
  cite: number;
  terms: Set<string>;
}

function sentencesOf(text: string): string[] {
  return (text.match(SENTENCE) ?? []).map((s) => s.replace(/\s+/g, ' ').trim()).filter((s) => s.length > 2);
}

/** Sentences ranked by the idf-weighted share of the question's terms they contain. */
function bestSentences(question: string, candidates: Candidate[]): Array<Candidate & { score: number }> {
  const asked = new Set(analyze(question));
  if (asked.size === 0) return [];
  const df = new Map<string, number>();
  for (const c of candidates) for (const t of c.terms) if (asked.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  const weight = (t: string) => Math.log(1 + candidates.length / (df.get(t) ?? 1));
  const total = [...asked].reduce((s, t) => s + weight(t), 0);
  return candidates
    .map((c, index) => {
      let matched = 0;
      for (const t of asked) if (c.terms.has(t)) matched += weight(t);
      // Share of the question covered, a little preference for concise sentences and earlier passages.
      const score = matched / total - c.terms.size * 0.002 - index * 1e-6;
      return { ...c, score: matched > 0 ? score : 0 };
    })
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score);
}

const VERBS: Record<string, string> = { prefers: 'prefer', likes: 'like', dislikes: 'dislike', uses: 'use', wants: 'want', has: 'have', drives: 'drive', eats: 'eat', lives: 'live', works: 'work', ordered: 'ordered', is: 'are', allergic_to: 'are allergic to' };

/** "user prefers express shipping" → "you prefer express shipping"; "user's name is Dana" → "your name is Dana". */
function secondPerson(fact: string): string {
  if (fact.startsWith("user's ")) return `your ${fact.slice(7)}`;
  if (!fact.startsWith('user ')) return fact;
  const [verb, ...rest] = fact.slice(5).split(' ') as [string, ...string[]];
  return `you ${VERBS[verb] ?? verb} ${rest.join(' ')}`;
}

export function localAnswer(request: ChatRequest): string {
  const messages = request.messages;
  const question = messages[messages.length - 1]?.content ?? '';
  const earlier = messages.slice(0, -1).filter((m) => m.role === 'user');
  const candidates: Candidate[] = [];
  (request.passages ?? []).forEach((p, i) => {
    for (const text of sentencesOf(p.text)) candidates.push({ text, cite: i + 1, terms: new Set(analyze(`${p.title} ${text}`)) });
  });
  for (const m of earlier) for (const text of sentencesOf(m.content)) candidates.push({ text, cite: 0, terms: new Set(analyze(text)) });
  for (const fact of request.memory ?? []) {
    const text = secondPerson(fact);
    candidates.push({ text, cite: -1, terms: new Set(analyze(text)) });
  }

  const ranked = bestSentences(question, candidates);
  const best = ranked[0];
  if (best && best.score >= 0.34) {
    const chosen = ranked.filter((c) => c.score >= best.score * 0.6).slice(0, 3);
    return chosen
      .map((c) => (c.cite > 0 ? `${c.text} [${c.cite}]` : c.cite < 0 ? `I remember from an earlier conversation that ${c.text}.` : `You told me earlier: "${c.text}"`))
      .join(' ');
  }
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
  if (request.passages !== undefined) return "I couldn't find anything about that in the connected knowledge.";
  const unsearched = request.agent?.unsearchedSources ?? 0;
  if (unsearched > 0) {
    return `I can't answer that from my knowledge: this agent lists ${unsearched} knowledge source${unsearched === 1 ? '' : 's'} but lacks the "document-search" capability, so it does not search them. Add "document-search" to its capabilities.`;
  }
  return "I can't answer that: no knowledge source is connected to me, and Cairn's built-in offline engine only answers from connected knowledge and from what you've told me in this conversation.";
}

/** Lexical classification for workflows: the category whose name, description and examples share most with the input. */
export function classifyLocally(input: string, categories: Array<{ name: string; description?: string; examples?: string[] }>) {
  const asked = new Set(analyze(input));
  const raw = categories.map((c) => {
    const terms = analyze([c.name, c.description ?? '', ...(c.examples ?? [])].join(' '));
    const unique = new Set(terms);
    let overlap = 0;
    for (const t of asked) if (unique.has(t)) overlap++;
    return { name: c.name, score: unique.size === 0 ? 0 : overlap / Math.sqrt(unique.size * Math.max(1, asked.size)) };
  });
  const total = raw.reduce((s, c) => s + c.score, 0);
  const scores = Object.fromEntries(raw.map((c) => [c.name, total > 0 ? c.score / total : 1 / raw.length]));
  const winner = raw.reduce((a, b) => (b.score > a.score ? b : a));
  return { category: winner.name, confidence: scores[winner.name]!, scores };
}

function result(request: ChatRequest, answer: string): ChatResult {
  if (request.responseFormat) answer = JSON.stringify(fillSchema(request, answer, request.responseFormat));
  // A stop sequence ends the reply before it, as a model's would.
  const stopAt = Math.min(...(request.stop ?? []).map((s) => answer.indexOf(s)).filter((i) => i >= 0));
  const text = Number.isFinite(stopAt) ? answer.slice(0, stopAt).trimEnd() : answer;
  const words = text.split(' ');
  const clipped = words.length > request.maxTokens ? words.slice(0, request.maxTokens).join(' ') : text;
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
  const decision = decideToolCall(request);
  if (!decision) return undefined;
  if ('ask' in decision) return result(request, decision.ask);
  return { text: '', usage: { inputTokens: approximateTokens(request.messages.map((m) => m.content).join(' ')), outputTokens: 0 }, finishReason: 'tool_calls', toolCalls: [decision.call] };
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
