import { z } from '@hono/zod-openapi';

/**
 * Scorers that need no model: each gives a score from 0 to 1 for one case, or `null` when the
 * case's expectation does not fit it (a `citations` scorer on a case without `expected.sources`):
 * such a case is listed, not failed. Some say more in `detail` (citations: recall and precision).
 */

/** What a case expects; each scorer reads its own part. */
export interface Expected {
  /** An acceptable answer, or several. */
  answer?: string | string[];
  /** Strings that must all appear in the reply (case-insensitive). */
  contains?: string[];
  /** A pattern the reply must match (JavaScript syntax, case-insensitive). */
  regex?: string;
  /** Paths the reply must cite. */
  sources?: string[];
  /** Tool calls that must be made: the name, and arguments compared as a subset. */
  toolCalls?: Array<{ name: string; arguments?: Record<string, unknown> }>;
  /** A JSON Schema the reply (its structured output, or its text parsed as JSON) must satisfy. */
  schema?: Record<string, unknown>;
  /** Whether the agent should say it cannot answer. */
  refuses?: boolean;
  /** What the llm_judge scorer grades this case by, beside the run's rubric. */
  rubric?: string;
  /** Limits of this case (else the run's options). */
  maxLatencyMs?: number;
  maxCostUsd?: number;
}

/** What a case's run produced, as scorers read it. */
export interface Observed {
  text: string;
  /** Structured output, when the target gave one. */
  output?: unknown;
  /** Paths of the cited sources. */
  sources: string[];
  toolCalls: Array<{ name: string; arguments?: Record<string, unknown> }>;
  latencyMs: number;
  /** Null when a model used has no price. */
  costUsd: number | null;
}

/** A run's settings for scorers that take one (a case's own expectation wins). */
export interface ScorerOptions {
  maxLatencyMs?: number;
  maxCostUsd?: number;
}

export interface Score {
  score: number | null;
  detail?: Record<string, number>;
  /** Why the case was not scored. */
  skipped?: string;
}

const notScored = (why: string): Score => ({ score: null, skipped: why });
const asList = (answer: string | string[] | undefined) => (answer === undefined ? [] : Array.isArray(answer) ? answer : [answer]);

/** SQuAD's normalisation: lower case, no punctuation, no articles (a, an, the), single spaces. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** SQuAD's token F1 between a reply and one answer. */
export function tokenF1(reply: string, answer: string): number {
  const got = normalizeAnswer(reply).split(' ').filter(Boolean);
  const want = normalizeAnswer(answer).split(' ').filter(Boolean);
  if (got.length === 0 || want.length === 0) return got.length === want.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of want) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of got) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common++;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / got.length;
  const recall = common / want.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Whether `actual` holds every field of `expected`, recursively (arrays element by element, values as JSON). */
function isSubset(expected: unknown, actual: unknown): boolean {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false;
    return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]));
  }
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.length === actual.length && expected.every((v, i) => isSubset(v, actual[i]));
  // Numbers given as strings and strings as numbers are the same argument (models write both).
  return expected === actual || (typeof expected !== typeof actual && String(expected) === String(actual));
}

/** Phrases with which a reply says it cannot answer (the built-in engine's own among them). */
const REFUSAL = /\b(i (?:could ?n[o']t|can ?n[o']t|cannot|am unable to|'m unable to|am not able to|'m not able to|do ?n[o']t (?:know|have))|unable to (?:answer|find|help)|no (?:relevant )?(?:information|passage|answer)|does ?n[o']t (?:cover|say|mention)|not (?:covered|mentioned) in|outside (?:my|the) (?:scope|knowledge))\b/i;

export const isRefusal = (text: string) => REFUSAL.test(text.replace(/[’‘]/g, "'"));

const validatorCache = new WeakMap<object, z.ZodType | undefined>();
function validatorOf(schema: Record<string, unknown>): z.ZodType | undefined {
  if (!validatorCache.has(schema)) {
    let made: z.ZodType | undefined;
    try {
      made = z.fromJSONSchema(schema);
    } catch {
      made = undefined;
    }
    validatorCache.set(schema, made);
  }
  return validatorCache.get(schema);
}

/** One scorer: its name, what it reads, and how it scores. */
interface Scorer {
  description: string;
  score(expected: Expected, observed: Observed, options: ScorerOptions): Score;
}

export const SCORERS = {
  exact: {
    description: '1 when the reply equals an acceptable answer after SQuAD’s normalisation (case, punctuation, articles, spaces), else 0',
    score: (e, o) => {
      const answers = asList(e.answer);
      if (answers.length === 0) return notScored('the case has no expected.answer');
      const reply = normalizeAnswer(o.text);
      return { score: answers.some((a) => normalizeAnswer(a) === reply) ? 1 : 0 };
    },
  },
  f1: {
    description: 'SQuAD’s token F1 of the reply against the closest acceptable answer',
    score: (e, o) => {
      const answers = asList(e.answer);
      if (answers.length === 0) return notScored('the case has no expected.answer');
      return { score: Math.max(...answers.map((a) => tokenF1(o.text, a))) };
    },
  },
  contains: {
    description: 'The share of expected.contains that the reply holds (case-insensitive)',
    score: (e, o) => {
      if (!e.contains?.length) return notScored('the case has no expected.contains');
      const reply = o.text.toLowerCase();
      return { score: e.contains.filter((s) => reply.includes(s.toLowerCase())).length / e.contains.length };
    },
  },
  regex: {
    description: '1 when the reply matches expected.regex (case-insensitive), else 0',
    score: (e, o) => {
      if (!e.regex) return notScored('the case has no expected.regex');
      return { score: new RegExp(e.regex, 'i').test(o.text) ? 1 : 0 };
    },
  },
  citations: {
    description: 'F1 of recall (expected.sources cited) and precision (cited sources expected); detail gives both',
    score: (e, o) => {
      if (!e.sources) return notScored('the case has no expected.sources');
      const want = new Set(e.sources);
      const cited = new Set(o.sources);
      if (want.size === 0) return { score: cited.size === 0 ? 1 : 0, detail: { recall: 1, precision: cited.size === 0 ? 1 : 0 } };
      const hits = [...cited].filter((s) => want.has(s)).length;
      const recall = hits / want.size;
      const precision = cited.size === 0 ? 0 : hits / cited.size;
      return { score: recall + precision === 0 ? 0 : (2 * recall * precision) / (recall + precision), detail: { recall, precision } };
    },
  },
  tool_calls: {
    description: 'The share of expected.toolCalls made (same name, expected arguments a subset of the call’s); an expected empty list scores 1 only when no tool was called',
    score: (e, o) => {
      if (!e.toolCalls) return notScored('the case has no expected.toolCalls');
      if (e.toolCalls.length === 0) return { score: o.toolCalls.length === 0 ? 1 : 0 };
      const unused = [...o.toolCalls];
      let matched = 0;
      for (const want of e.toolCalls) {
        const at = unused.findIndex((c) => c.name === want.name && isSubset(want.arguments ?? {}, c.arguments ?? {}));
        if (at >= 0) {
          matched++;
          unused.splice(at, 1);
        }
      }
      return { score: matched / e.toolCalls.length };
    },
  },
  json_schema: {
    description: '1 when the reply (its structured output, else its text as JSON) satisfies expected.schema, else 0',
    score: (e, o) => {
      if (!e.schema) return notScored('the case has no expected.schema');
      const validator = validatorOf(e.schema);
      if (!validator) return notScored('expected.schema is not a JSON Schema this server can check');
      let value = o.output;
      if (value === undefined) {
        try {
          value = JSON.parse(o.text);
        } catch {
          return { score: 0 };
        }
      }
      return { score: validator.safeParse(value).success ? 1 : 0 };
    },
  },
  refusal: {
    description: '1 when the reply says it cannot answer exactly when expected.refuses is true, else 0',
    score: (e, o) => {
      if (e.refuses === undefined) return notScored('the case has no expected.refuses');
      return { score: isRefusal(o.text) === e.refuses ? 1 : 0 };
    },
  },
  latency: {
    description: '1 when the case took at most its maxLatencyMs (expected.maxLatencyMs, else the run’s), else that limit over the time taken',
    score: (e, o, options) => {
      const limit = e.maxLatencyMs ?? options.maxLatencyMs;
      if (limit === undefined) return notScored('no maxLatencyMs in the case or the run');
      return { score: o.latencyMs <= limit ? 1 : limit / o.latencyMs };
    },
  },
  cost: {
    description: '1 when the case cost at most its maxCostUsd (expected.maxCostUsd, else the run’s), else that limit over the cost; not scored when a model has no price',
    score: (e, o, options) => {
      const limit = e.maxCostUsd ?? options.maxCostUsd;
      if (limit === undefined) return notScored('no maxCostUsd in the case or the run');
      if (o.costUsd === null) return notScored('a model the case used has no price (MODEL_PRICES)');
      return { score: o.costUsd <= limit ? 1 : limit / o.costUsd };
    },
  },
} satisfies Record<string, Scorer>;

export type ScorerName = keyof typeof SCORERS | 'llm_judge';
export const SCORER_NAMES: ScorerName[] = [...(Object.keys(SCORERS) as Array<keyof typeof SCORERS>), 'llm_judge'];

/** Scores one case with one scorer that needs no model. */
export function scoreCase(name: keyof typeof SCORERS, expected: Expected, observed: Observed, options: ScorerOptions = {}): Score {
  try {
    return (SCORERS[name]).score(expected, observed, options);
  } catch (error) {
    // A case's own pattern that does not compile is the case's problem, not the run's.
    return notScored(`the case's expectation could not be read: ${(error as Error).message}`);
  }
}
