import { createHash } from 'node:crypto';
import { analyze } from '../search/analyzer';
import type { ChatRequest, ToolCall, ToolSpec } from './types';

/**
 * How the built-in engine uses tools, deterministically: it calls the tool whose name and
 * description share the most words with the message, when every required argument can be taken
 * from the message by its JSON Schema (enums, numbers, emails, dates, URLs, values matching a
 * `pattern`, quoted strings, id-like tokens); when one cannot, it asks for it by name. A
 * `knowledge_search`-style tool (a `query` argument) is its fallback for questions no other tool
 * matches. It answers from what the tools returned, citing them.
 */
type PropertySchema = { type?: string; enum?: unknown[]; pattern?: string; format?: string; description?: string };

export type ToolDecision = { call: ToolCall } | { ask: string } | undefined;

const QUERY_NAMES = new Set(['query', 'q', 'question', 'text', 'input', 'search', 'message']);
const words = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase();

function quoted(message: string): string[] {
  return [...message.matchAll(/"([^"]+)"|“([^”]+)”|'([^']{2,})'/g)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

function tokens(message: string): string[] {
  return message.split(/\s+/).map((t) => t.replace(/^[^\w@#]+|[^\w]+$/g, '')).filter(Boolean);
}

/** The first of a schema's enum values the text names as a word (any case). */
export function mentionedValue(values: unknown[], text: string): unknown {
  return values.find((v) => typeof v === 'string' && new RegExp(`\\b${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(text));
}

function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return false;
  }
}

/** One argument from the message, by its schema (and, for plain strings, by its name). */
function extract(name: string, schema: PropertySchema, message: string, used: Set<string>): unknown {
  const fresh = (values: string[]) => values.find((v) => !used.has(v));
  if (schema.enum) return mentionedValue(schema.enum, message);
  if (schema.type === 'integer' || schema.type === 'number') {
    const numbers = [...message.matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => m[0]).filter((n) => schema.type === 'number' || !n.includes('.'));
    const value = fresh(numbers);
    return value === undefined ? undefined : Number(value);
  }
  if (schema.type !== undefined && schema.type !== 'string') return undefined;
  if (schema.format === 'email') return fresh(message.match(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g) ?? []);
  if (schema.format === 'date') return fresh(message.match(/\b\d{4}-\d{2}-\d{2}\b/g) ?? []);
  if (schema.format === 'uri' || schema.format === 'url') return fresh(message.match(/https?:\/\/\S+/g) ?? []);
  if (schema.pattern) return fresh([...quoted(message), ...tokens(message)].filter((t) => matches(schema.pattern!, t)));
  const inQuotes = fresh(quoted(message));
  if (inQuotes) return inQuotes;
  if (QUERY_NAMES.has(name.toLowerCase())) return message;
  // An identifier-like parameter (orderId, order_number, code): a token with a digit in it.
  if (/(id|number|no|code|ref|reference)$/i.test(name)) return fresh(tokens(message).filter((t) => /\d/.test(t)));
  return undefined;
}

function argumentsFor(tool: ToolSpec, message: string): { args: Record<string, unknown>; missing?: string } {
  const properties = (tool.parameters.properties ?? {}) as Record<string, PropertySchema>;
  const required = new Set((tool.parameters.required ?? []) as string[]);
  const used = new Set<string>();
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = extract(name, schema, message, used);
    if (value !== undefined) {
      args[name] = value;
      used.add(typeof value === 'string' ? value : JSON.stringify(value));
    } else if (required.has(name)) {
      return { args, missing: schema.description ? `${words(name)} (${schema.description})` : words(name) };
    }
  }
  return { args };
}

export function decideToolCall(request: ChatRequest): ToolDecision {
  const tools = request.tools ?? [];
  const message = request.messages[request.messages.length - 1]?.content ?? '';
  if (tools.length === 0 || !message.trim()) return undefined;
  const asked = new Set(analyze(message));
  const scored = tools
    .map((tool) => {
      const terms = new Set(analyze(`${words(tool.name)} ${tool.description}`));
      let overlap = 0;
      for (const t of asked) if (terms.has(t)) overlap++;
      return { tool, overlap };
    })
    .sort((a, b) => b.overlap - a.overlap);
  const searchTool = tools.find((t) => Object.keys(t.parameters.properties ?? {}).some((p) => QUERY_NAMES.has(p.toLowerCase())));
  const choice = request.toolChoice;
  const best =
    choice && choice !== 'required'
      ? tools.find((t) => t.name === choice.name)
      : scored[0]!.overlap > 0
        ? scored[0]!.tool
        : (searchTool ?? (choice === 'required' ? scored[0]!.tool : undefined));
  if (!best) return undefined;
  const { args, missing } = argumentsFor(best, message);
  if (missing) return { ask: `To use ${words(best.name)} I need the ${missing}. Could you give it to me?` };
  // Deterministic: the same message and tool give the same call id.
  const id = `call_${createHash('sha256').update(`${best.name}\u0000${JSON.stringify(args)}`).digest('hex').slice(0, 16)}`;
  return { call: { id, name: best.name, arguments: args } };
}

/** Key facts of a JSON result: its scalar fields (one level of nesting), as `key: value`. */
function facts(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [`${prefix || 'result'}: ${String(value)}`];
  if (Array.isArray(value)) return value.slice(0, 5).flatMap((v, i) => facts(v, `${prefix}${prefix ? ' ' : ''}#${i + 1}`));
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' ? (prefix ? [] : facts(v, words(k))) : [`${prefix ? `${prefix} ` : ''}${words(k)}: ${String(v)}`],
  );
}

/** The reply after the tools answered: what each returned, cited as the tool. */
export function answerFromTools(request: ChatRequest): string {
  const round = request.toolRounds![request.toolRounds!.length - 1]!;
  return round.results
    .map((result) => {
      if (result.isError) return `I could not get that from ${words(result.name)}: ${result.content.slice(0, 300)} [${result.name}]`;
      let parsed: unknown;
      try {
        parsed = JSON.parse(result.content);
      } catch {
        const text = result.content.trim();
        return `${text.length > 600 ? `${text.slice(0, 597)}…` : text} [${result.name}]`;
      }
      return `${words(result.name)} returned ${facts(parsed).slice(0, 12).join('; ')} [${result.name}].`;
    })
    .join('\n\n');
}
