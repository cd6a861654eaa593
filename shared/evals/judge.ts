import { z } from '@hono/zod-openapi';
import { ValidationError } from '../errors';
import { isValidModelName, MODEL_NAME_REASON } from '../models/model-name';
import { missingModelSetting } from '../models/resolve-model';
import { checkReply } from '../models/structured-output';
import { addUsage, formatInstruction, type ChatRequest, type ResolvedModel } from '../models/types';
import type { Runtime } from '../runtime';
import type { Expected, Observed, Score } from './scorers';

/**
 * The `llm_judge` scorer: a configured model (any provider Cairn has) grades each reply against a
 * rubric, from 0 to 1, and says why. The built-in engine cannot judge: a run asking for it with
 * no provider configured is a 400 naming the setting that is missing.
 */
export const judgeInput = z
  .strictObject({
    model: z.string().refine(isValidModelName, { error: MODEL_NAME_REASON }).openapi({ example: 'openai/gpt-4o-mini', description: 'A provider’s model (not the built-in engine)' }),
    rubric: z.string().trim().min(1).max(10_000).openapi({ description: 'What a good reply does; a case’s expected.rubric is added to it', example: 'Answers from the returns policy, names the time limit, and does not invent conditions.' }),
  })
  .openapi('EvalJudge');
export type Judge = z.infer<typeof judgeInput>;

/** The judge's model, resolved: a 400 naming the missing setting when it would be the built-in engine. */
export async function judgeModel(rt: Runtime, judge: Judge): Promise<ResolvedModel> {
  const resolved = await rt.models.resolve(judge.model);
  if (resolved.name.startsWith('local/')) throw new ValidationError('judge.model', missingModelSetting(judge.model));
  return resolved;
}

const verdict = {
  type: 'object',
  properties: { score: { type: 'number', minimum: 0, maximum: 1 }, reasoning: { type: 'string' } },
  required: ['score', 'reasoning'],
  additionalProperties: false,
};

const INSTRUCTIONS =
  'You grade an AI assistant’s reply against a rubric. Read the rubric, the question, the expected answer when there is one, and the reply. ' +
  'Give a score from 0 (fails the rubric) to 1 (fully meets it), in steps of 0.1, and one or two sentences of reasoning. Grade only what the rubric asks.';

export interface Judgement extends Score {
  reasoning?: string;
  model: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** Grades one reply. A judge whose reply is not a verdict (after one repair) leaves the case unscored, saying so. */
export async function judgeReply(model: ResolvedModel, judge: Judge, question: string, expected: Expected & { rubric?: string }, observed: Observed, signal: AbortSignal, now: number): Promise<Judgement> {
  const answers = expected.answer === undefined ? [] : Array.isArray(expected.answer) ? expected.answer : [expected.answer];
  const prompt = [
    `Rubric:\n${judge.rubric}${expected.rubric ? `\n${expected.rubric}` : ''}`,
    `Question:\n${question}`,
    ...(answers.length > 0 ? [`Expected answer${answers.length > 1 ? 's (any one)' : ''}:\n${answers.join('\n')}`] : []),
    `Reply to grade:\n${observed.text || '(empty)'}`,
  ].join('\n\n');
  const request: ChatRequest = {
    model: model.model,
    instructions: INSTRUCTIONS,
    messages: [{ role: 'user', content: prompt }],
    now,
    temperature: 0,
    maxTokens: 400,
    responseFormat: { type: 'json_schema', name: 'verdict', schema: verdict },
  };
  const first = await model.engine.generate(request, signal);
  let checked = checkReply(first.text, request.responseFormat!);
  let usage = first.usage;
  if (!checked.ok) {
    // One repair, as structured replies get everywhere: the judge is told what was wrong.
    const repaired = await model.engine.generate({ ...request, messages: [...request.messages, { role: 'assistant', content: first.text }, { role: 'user', content: `That reply is not valid: ${checked.error}. ${formatInstruction(request.responseFormat!)}` }] }, signal);
    usage = addUsage(usage, repaired.usage);
    checked = checkReply(repaired.text, request.responseFormat!);
  }
  if (!checked.ok) return { score: null, skipped: `the judge’s reply was not a verdict (${checked.error}), after one repair`, model: model.name, usage };
  const { score, reasoning } = checked.value as { score: number; reasoning: string };
  return { score: Math.round(score * 1000) / 1000, reasoning, model: model.name, usage };
}
