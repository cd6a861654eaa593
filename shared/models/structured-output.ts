import { z } from 'zod';
import { AppError, UpstreamError } from '../errors';
import { valueFromAnswer, type PropertySchema } from './schema-filling';
import { addUsage, formatInstruction, type ChatRequest, type ChatResult, type ResolvedModel, type ResponseFormat } from './types';

/**
 * Structured output: a reply that must be JSON (matching a JSON Schema, when one is given).
 * Providers are asked natively where their API can (OpenAI `response_format`) and by instruction
 * otherwise; the reply is checked here in every case, and one repair is asked for before the turn
 * fails with the validation error. The built-in engine fills a schema from its own answer.
 */
/** The JSON in a reply (a code fence around it is tolerated), checked against the format. */
export function checkReply(text: string, format: ResponseFormat): { ok: true; value: unknown } | { ok: false; error: string } {
  const body = text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, '$1');
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, error: 'the reply is not JSON' };
  }
  if (format.type === 'json_object') return value && typeof value === 'object' && !Array.isArray(value) ? { ok: true, value } : { ok: false, error: 'the reply is not a JSON object' };
  const parsed = z.fromJSONSchema(format.schema).safeParse(value);
  if (parsed.success) return { ok: true, value };
  const issue = parsed.error.issues[0]!;
  return { ok: false, error: `${issue.path.join('.') || 'the value'}: ${issue.message}` };
}

const invalidReply = (model: string, error: string) =>
  new UpstreamError(`The model's reply does not match the requested format (${error}), after one repair attempt`, { model, validation: error }, { retryable: false });

/**
 * A reply in the request's format: checked, and when it does not match, asked once more with the
 * error (then a 502 naming it). `output` is the parsed value.
 */
export async function inFormat(model: ResolvedModel, request: ChatRequest, result: ChatResult, signal: AbortSignal): Promise<ChatResult & { output?: unknown }> {
  const format = request.responseFormat;
  if (!format || result.finishReason === 'interrupted') return result;
  const first = checkReply(result.text, format);
  if (first.ok) return { ...result, output: first.value };
  const repair: ChatRequest = {
    ...request,
    tools: undefined,
    toolRounds: undefined,
    messages: [...request.messages, { role: 'assistant', content: result.text }, { role: 'user', content: `That reply is not valid: ${first.error}. ${formatInstruction(format)}` }],
  };
  const repaired = await model.engine.generate(repair, signal);
  const second = checkReply(repaired.text, format);
  if (!second.ok) throw invalidReply(model.name, second.error);
  return { ...repaired, usage: addUsage(result.usage, repaired.usage), output: second.value };
}

/**
 * The built-in engine's structured reply: each property filled from its answer where it can be —
 * answer-like strings with the answer, enums with a value the question or answer names, numbers
 * with a number of the answer, booleans from a yes/no answer. A required property it cannot fill
 * is a 422 naming it: it says so rather than invent a value.
 */
export function fillSchema(request: ChatRequest, answer: string, format: ResponseFormat): unknown {
  if (format.type === 'json_object') return { answer };
  const schema = format.schema as PropertySchema;
  if (schema.type !== 'object') {
    if (schema.type === 'string' || schema.type === undefined) return answer;
    throw new AppError('UNPROCESSABLE', 'The built-in engine can fill a JSON object or a string, not this schema', { field: 'responseFormat.schema' });
  }
  const question = request.messages[request.messages.length - 1]?.content ?? '';
  const haystack = `${question}\n${answer}`;
  const out: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = valueFromAnswer(name, property, haystack, answer);
    if (value !== undefined) out[name] = value;
    else if (schema.required?.includes(name)) missing.push(name);
  }
  if (missing.length > 0) {
    throw new AppError('UNPROCESSABLE', `The built-in engine could not fill ${missing.join(', ')} from what it knows; a model provider can`, { field: 'responseFormat.schema', missing });
  }
  return out;
}
