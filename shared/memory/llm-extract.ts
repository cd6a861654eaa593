import { z } from 'zod';
import type { ResolvedModel } from '../models/types';
import type { Extraction } from './extract';

const ENTITY_TYPES = ['person', 'place', 'organization', 'product', 'date', 'number', 'concept'] as const;

const PROMPT = `You extract long-term memory from one message a user sent to an assistant.
Answer with one JSON object and nothing else:
{"entities":[{"label":"…","type":"person|place|organization|product|date|number|concept"}],
 "facts":[{"relation":"snake_case verb or attribute, e.g. prefers, likes, dislikes, lives_in, works_at, name, email","object":{"label":"…","type":"…"},"negated":false}]}
Facts are only about the user (the speaker) and only what the message states; "negated": true when the user says something no longer holds ("I don't like X anymore").
Use the words of the message for labels. No facts → "facts": [].`;

const entity = z.object({ label: z.string().trim().min(1).max(200), type: z.enum(ENTITY_TYPES).catch('concept') });
const answer = z.object({
  entities: z.array(entity).max(50).default([]),
  facts: z
    .array(z.object({ relation: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/), object: entity, negated: z.boolean().default(false) }))
    .max(30)
    .default([]),
});

/** The first balanced {...} of a reply (models sometimes wrap JSON in prose or code fences). */
function firstObject(text: string): unknown {
  const start = text.indexOf('{');
  if (start < 0) throw new Error('no JSON object in the reply');
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error('unbalanced JSON object in the reply');
}

/**
 * Memory extraction by the agent's configured model. Throws on anything but a well-formed
 * answer, so the caller can fall back to the rules rather than store a model's garbage.
 */
export async function extractWithModel(resolved: ResolvedModel, text: string, signal: AbortSignal, now: number): Promise<Extraction> {
  const result = await resolved.engine.generate(
    { model: resolved.model, instructions: PROMPT, messages: [{ role: 'user', content: text.slice(0, 8000) }], now, temperature: 0, maxTokens: 800 },
    signal,
  );
  const parsed = answer.parse(firstObject(result.text));
  return {
    entities: [...parsed.entities, ...parsed.facts.map((f) => f.object)],
    facts: parsed.facts.map((f) => ({ subject: 'user' as const, relation: f.relation, object: f.object, negated: f.negated })),
  };
}
