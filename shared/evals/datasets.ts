import { z } from '@hono/zod-openapi';
import { isoNow } from '../clock';
import { collection } from '../collection';
import { ConflictError, ValidationError } from '../errors';
import { newId } from '../ids';
import type { Runtime } from '../runtime';
import { checkable, recordFields } from '../schema-helpers';
import type { Idempotency } from '../store/records';
import type { TenantScope } from '../tenancy';
import { assertStorableJson } from '../json-guard';
import { parseInput } from '../validation';
import { assistantMessage } from '../agents';
import { assertClaimAllowed, END_USER_ID, groupsInput } from '../identity';

/**
 * Evaluation datasets: named lists of cases, each an input (a question, or chat messages) and
 * what a good reply does (`expected`, read by the scorers). Cases are added in JSON or JSON Lines
 * (OpenAI Evals' `{"input": [messages], "ideal": …}` lines too) and read back in the order added.
 */
export const MAX_CASES = 10_000;

const pattern = z
  .string()
  .min(1)
  .max(1000)
  .refine(
    (source) => {
      try {
        new RegExp(source, 'i');
        return true;
      } catch {
        return false;
      }
    },
    { error: 'must be a regular expression (JavaScript syntax)' },
  );

const jsonSchema = z
  .record(z.string(), z.unknown())
  .superRefine(checkable('replies'))
  .openapi({ description: 'A JSON Schema the reply (its structured output, else its text as JSON) must satisfy' });

export const expectedInput = z
  .strictObject({
    answer: z
      .union([z.string().max(10_000), z.array(z.string().max(10_000)).min(1).max(50)])
      .optional()
      .openapi({ description: 'An acceptable answer, or several (exact, f1)' }),
    contains: z.array(z.string().min(1).max(1000)).min(1).max(50).optional().openapi({ description: 'Strings the reply must all hold, case-insensitive (contains)' }),
    regex: pattern.optional().openapi({ description: 'A pattern the reply must match, case-insensitive (regex)' }),
    sources: z.array(z.string().min(1).max(1024)).max(100).optional().openapi({ description: 'Paths the reply must cite (citations)' }),
    toolCalls: z
      .array(z.strictObject({ name: z.string().min(1).max(128), arguments: z.record(z.string(), z.unknown()).optional() }))
      .max(20)
      .optional()
      .openapi({ description: 'Calls that must be made; arguments are compared as a subset (tool_calls)' }),
    schema: jsonSchema.optional(),
    refuses: z.boolean().optional().openapi({ description: 'Whether the agent should say it cannot answer (refusal)' }),
    rubric: z.string().trim().min(1).max(10_000).optional().openapi({ description: 'What this case’s reply is graded by, beside the run’s judge.rubric (llm_judge)' }),
    maxLatencyMs: z.int().min(1).max(3_600_000).optional().openapi({ description: 'This case’s limit for the latency scorer' }),
    maxCostUsd: z.number().positive().max(1000).optional().openapi({ description: 'This case’s limit for the cost scorer' }),
  })
  .openapi('EvalExpected');

const chatMessage = z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(100_000) });

/** The end user a case asks as: what they may read, remember and reach count for its answer. */
const caseContext = z
  .strictObject({
    userId: z.string().regex(END_USER_ID, { error: 'must be 1–200 characters, no slash or space' }),
    groups: groupsInput,
  })
  .openapi({ description: 'The end user the case asks as (named by the dataset, never verified): the documents they may read and their memory, never their connected accounts. Without it, the case asks for nobody: only documents open to everyone. Refused (400) where the tenant requires verified end users' });

export const caseInput = z
  .strictObject({
    input: z
      .union([
        z.string().trim().min(1).max(100_000),
        z
          .array(chatMessage)
          .min(1)
          .max(50)
          .refine((messages) => messages.some((m) => m.role === 'user'), { error: 'must hold a user message: the last one is what the target is asked' }),
      ])
      .openapi({ description: 'The question, or chat messages (the last user message is asked)' }),
    expected: expectedInput.optional(),
    metadata: z.record(z.string(), z.unknown()).optional().openapi({ description: 'Free-form: tags, where the case came from' }),
    context: caseContext.optional(),
  })
  .openapi('EvalCaseInput', { example: { input: 'How long do I have to return an item?', expected: { answer: '30 days', sources: ['returns.md'] } } });
export type CaseInput = z.infer<typeof caseInput>;

/** OpenAI Evals' line (`{"input": [messages], "ideal": "…" | [...]}`) as a case: `ideal` is the expected answer. */
function fromEvalsLine(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw) || !('ideal' in raw) || 'expected' in raw) return raw;
  const { ideal, ...rest } = raw as Record<string, unknown>;
  return { ...rest, expected: { answer: ideal } };
}

export const datasetInput = z
  .strictObject({
    name: z.string().trim().min(1).max(200).openapi({ example: 'Returns questions' }),
    description: z.string().max(2000).default(''),
    cases: z.array(z.unknown()).max(MAX_CASES).default([]).openapi({ description: 'Cases (EvalCaseInput, or OpenAI Evals lines with `ideal`); more can be added later' }),
  })
  .openapi('EvalDatasetInput', { example: { name: 'Returns questions', cases: [{ input: 'How long do I have to return an item?', expected: { answer: '30 days' } }] } });

const messageAddress = z
  .strictObject({ agentId: z.string().min(1).max(200), sessionId: z.string().min(1).max(128), messageId: z.string().min(1).max(200) })
  .openapi({ description: 'An agent’s stored reply (converse’s data.messageId): it and the question before it become a case' });

export const appendInput = z
  .strictObject({
    cases: z.array(z.unknown()).min(1).max(MAX_CASES).optional().openapi({ description: 'Cases (EvalCaseInput, or OpenAI Evals lines with `ideal`)' }),
    fromMessage: messageAddress.optional(),
    expected: expectedInput.optional().openapi({ description: 'With fromMessage: what a good reply does. Without it, a reply rated up is expected again (its text and cited paths); one rated down or not rated gets none' }),
    metadata: z.record(z.string(), z.unknown()).optional().openapi({ description: 'With fromMessage: added to what the case records of the message (feedback, reply, model)' }),
  })
  .superRefine((body, ctx) => {
    if ((body.cases === undefined) === (body.fromMessage === undefined)) ctx.addIssue({ code: 'custom', path: ['cases'], message: 'send cases or fromMessage (one of them)' });
    for (const field of ['expected', 'metadata'] as const) {
      if (body.cases !== undefined && body[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'goes with fromMessage (a case of cases holds its own)' });
    }
  })
  .openapi('EvalCasesInput', { example: { cases: [{ input: 'Can I return a gift?', expected: { contains: ['receipt'] } }] } });
export type AppendInput = z.infer<typeof appendInput>;

const storedDataset = z.object({ ...recordFields, name: z.string(), description: z.string(), caseCount: z.number() });
type StoredDataset = z.infer<typeof storedDataset>;

export const datasetShown = storedDataset.omit({ version: true }).openapi('EvalDataset');
export const caseShown = z
  .object({ id: z.string(), position: z.int(), input: caseInput.shape.input, expected: z.record(z.string(), z.unknown()).optional(), metadata: z.record(z.string(), z.unknown()).optional(), context: caseContext.optional(), createdAt: z.string() })
  .openapi('EvalCase');

export const datasets = collection<StoredDataset>('EVAL_DATASET', 'evalDataset', 'eval dataset', storedDataset);

const present = ({ version: _v, ...shown }: StoredDataset) => shown;

/** Each raw case parsed as a case (OpenAI Evals lines converted), a 400 naming the first that is not one. */
function parseCases(raw: unknown[], field: (i: number) => string): CaseInput[] {
  return raw.map((c, i) => parseInput(caseInput, fromEvalsLine(c), field(i)));
}

/** JSON Lines as cases: a line that is not JSON is a 400 naming its number (from 1); blank lines are skipped. */
export function casesOfJsonLines(text: string): CaseInput[] {
  const lines = text.split(/\r?\n/);
  const cases: CaseInput[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(`line ${i + 1}`, `is not JSON: ${(error as Error).message}`, { line: i + 1 });
    }
    // Each line is held to the rules every JSON body is (depth, numbers, reserved names).
    assertStorableJson(raw, `line ${i + 1}`);
    cases.push(parseInput(caseInput, fromEvalsLine(raw), `line ${i + 1}`));
  });
  if (cases.length === 0) throw new ValidationError('body', 'holds no case: send one JSON object a line');
  if (cases.length > MAX_CASES) throw new ValidationError('body', `holds ${cases.length} cases: at most ${MAX_CASES} a dataset`);
  return cases;
}

async function writeCases(rt: Runtime, scope: TenantScope, datasetId: string, cases: CaseInput[], firstPosition: number) {
  // A case's context names its end user by the dataset's word: a claim the tenant must take.
  const claiming = cases.findIndex((c) => c.context !== undefined);
  if (claiming >= 0) await assertClaimAllowed(rt, scope, `cases[${claiming}].context`);
  const now = isoNow(rt.clock);
  await rt.store.evalCases.putCases(
    scope,
    datasetId,
    cases.map((c, i) => ({ id: newId('evalCase', rt.clock.now()), position: firstPosition + i, ...c, createdAt: now })),
  );
}

export async function createDataset(rt: Runtime, scope: TenantScope, input: z.infer<typeof datasetInput>, idempotency?: Idempotency) {
  const cases = parseCases(input.cases, (i) => `cases[${i}]`);
  const created = await datasets.create(rt, scope, { name: input.name, description: input.description, caseCount: cases.length }, { idempotency });
  if (!created.replayed && cases.length > 0) {
    try {
      await writeCases(rt, scope, created.record.id, cases, 1);
    } catch (error) {
      // A dataset is made with its cases or not at all: a retry starts clean.
      await deleteDataset(rt, scope, created.record.id).catch(() => undefined);
      throw error;
    }
  }
  return { record: present(created.record), replayed: created.replayed };
}

/**
 * Adds cases after those there: the dataset's count is moved first (a concurrent append gets the
 * positions after these), past 10,000 a 409 that adds nothing.
 */
export async function appendCases(rt: Runtime, scope: TenantScope, datasetId: string, cases: CaseInput[]) {
  await datasets.get(rt, scope, datasetId);
  let first = 0;
  const updated = await datasets.update(rt, scope, datasetId, (current) => {
    if (current.caseCount + cases.length > MAX_CASES) {
      throw new ConflictError(`eval dataset ${datasetId} holds ${current.caseCount} cases: ${cases.length} more would pass the ${MAX_CASES} a dataset holds`, { limit: MAX_CASES, caseCount: current.caseCount });
    }
    first = current.caseCount + 1;
    return { ...current, caseCount: current.caseCount + cases.length, updatedAt: isoNow(rt.clock) };
  });
  await writeCases(rt, scope, datasetId, cases, first);
  return { dataset: present(updated!), added: cases.length };
}

/**
 * A stored reply and the question before it as a case. The message's feedback, reply, model and
 * version go in `metadata`; a reply rated up (and not given an `expected`) is expected again.
 */
async function caseOfMessage(rt: Runtime, scope: TenantScope, body: AppendInput & { fromMessage: z.infer<typeof messageAddress> }): Promise<CaseInput> {
  const { agentId, sessionId, messageId } = body.fromMessage;
  const reply = await assistantMessage(rt, scope, agentId, sessionId, messageId);
  const question = await rt.store.sessions.messageBefore(scope, agentId, sessionId, messageId);
  if (!question || question.role !== 'user') throw new ValidationError('fromMessage.messageId', 'has no question before it in its session (it was deleted, or expired)');
  const cited = sourcePaths(reply.sources ?? []);
  const keep = reply.feedback?.rating === 'up' ? { answer: reply.content, ...(cited.length > 0 ? { sources: [...new Set(cited)] } : {}) } : undefined;
  const expected = body.expected ?? keep;
  const metadata = {
    ...body.metadata,
    fromMessage: body.fromMessage,
    reply: reply.content.slice(0, 10_000),
    ...(reply.feedback ? { feedback: reply.feedback } : {}),
    ...(reply.model ? { model: reply.model } : {}),
    ...(reply.agentVersion !== undefined ? { agentVersion: reply.agentVersion } : {}),
  };
  return parseInput(caseInput, { input: question.content, ...(expected ? { expected } : {}), metadata }, 'fromMessage');
}

/** The paths of cited sources (a reply's, a workflow output's): what the citations scorer compares. */
export const sourcePaths = (sources: unknown[]) => sources.flatMap((s) => (s && typeof s === 'object' && typeof (s as { path?: unknown }).path === 'string' ? [(s as { path: string }).path] : []));

/** The cases a JSON append adds: its `cases`, or the one made of `fromMessage`. */
export async function casesOfAppend(rt: Runtime, scope: TenantScope, body: AppendInput): Promise<CaseInput[]> {
  if (body.fromMessage) return [await caseOfMessage(rt, scope, { ...body, fromMessage: body.fromMessage })];
  return parseCases(body.cases ?? [], (i) => `cases[${i}]`);
}

export async function getDataset(rt: Runtime, scope: TenantScope, id: string) {
  return present(await datasets.get(rt, scope, id));
}

export async function listDatasets(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }) {
  const listed = await datasets.list(rt, scope, page);
  return { ...listed, items: listed.items.map(present) };
}

export async function listCases(rt: Runtime, scope: TenantScope, datasetId: string, page: { limit: number; cursor?: string }) {
  await datasets.get(rt, scope, datasetId);
  return rt.store.evalCases.listCases(scope, datasetId, page);
}

/** Deletes a dataset: the record first (so nothing appends to what is being purged), then its cases. */
export async function deleteDataset(rt: Runtime, scope: TenantScope, id: string) {
  const removed = await datasets.remove(rt, scope, id);
  await rt.store.evalCases.removeAll(scope, id);
  return present(removed);
}
