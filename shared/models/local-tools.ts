import { arithmeticOf, codeToolOf, groundedArithmeticOf } from './local-arithmetic';
import { createHash } from 'node:crypto';
import { analyze } from '../search/analyzer';
import { enumMentions, fillArguments, listedValues, nameWords, stem } from './argument-filling';
import { typedValue, type PropertySchema } from './schema-filling';
import type { ChatRequest, ToolCall, ToolSpec } from './types';

/**
 * How the built-in engine uses tools, deterministically: it calls the tool whose name, description
 * and parameters share the most with the message (a few synonyms: "raining" asks for the weather),
 * when every required argument can be read from the message (`argument-filling.ts`); when one
 * cannot, it asks for it by name. A `knowledge_search`-style tool (a `query` argument) is its
 * fallback for questions no other tool matches. It answers from what the tools returned, citing them.
 */
export type ToolDecision = { calls: ToolCall[] } | { ask: string } | undefined;

const QUERY_NAMES = new Set(['query', 'q', 'question', 'text', 'input', 'search', 'message']);
const words = (name: string) => nameWords(name).join(' ');

/** Words people use for what a tool does, beside the tool's own ("raining" asks for the weather). */
const SYNONYMS: Record<string, string[]> = {
  weather: ['rain', 'raining', 'sunny', 'snow', 'temperature', 'forecast', 'hot', 'cold', 'umbrella', 'wind', 'humid'],
  convert: ['exchange', 'rate', 'worth'],
  order: ['bought', 'buy', 'purchase', 'parcel', 'package', 'delivery', 'shipped'],
  sum: ['add', 'plus', 'total'],
  add: ['plus', 'sum', 'total'],
  multiply: ['times', 'product', 'multiplied'],
  product: ['multiplied', 'multiply', 'times'],
  distance: ['far', 'miles', 'km', 'kilometres', 'kilometers'],
  subtract: ['minus', 'difference'],
  divide: ['divided', 'quotient'],
  sort: ['arrange', 'arranged', 'ascending', 'descending', 'smallest', 'largest'],
  concat: ['combine', 'join', 'merge'],
  todo: ['remember', 'reminder', 'task'],
  search: ['find', 'look', 'lookup'],
  send: ['email', 'mail', 'message', 'notify'],
  book: ['reserve', 'reservation', 'booking'],
  calculate: ['compute'],
};

/** Words every tool's description uses: sharing them says nothing about what is asked. */
const GENERIC = new Set(analyze('get set current retrieve retrieves fetch fetches data information info list lists request requests api details detail specified specific provide provides return returns use using make given new value values result results item items object type name names user users based following'));

/**
 * Actions that exclude each other: a message asking to do one is not about a tool named for
 * another. Words for the same action (create and add, delete and remove) are one.
 */
const ACTIONS: Record<string, string> = { create: 'create', add: 'create', delete: 'delete', remove: 'delete', update: 'update', list: 'list', open: 'open', close: 'close', cancel: 'cancel', start: 'start', stop: 'stop', login: 'login', logout: 'logout', enable: 'enable', disable: 'disable' };
const ACTION_WORDS = Object.entries(ACTIONS).map(([word, action]) => ({ action, pattern: new RegExp(`\\b${word === 'login' ? 'log ?in' : word === 'logout' ? 'log ?out' : word}\\b`, 'i') }));
const actionsOf = (text: string) => [...new Set(ACTION_WORDS.filter(({ pattern }) => pattern.test(text)).map(({ action }) => action))];

/** A message as the tools are weighed against it: read once, whatever the number of tools. */
interface Said {
  text: string;
  asked: Set<string>;
  askedStems: Set<string>;
  actions: string[];
}

/** How much a tool's name, description and parameters share with the message. */
function relevance(tool: ToolSpec, { text: message, asked, askedStems, actions: asking }: Said): number {
  const toolActions = actionsOf(nameWords(tool.name).join(' '));
  if (toolActions.length > 0 && asking.length > 0 && !asking.some((a) => toolActions.includes(a))) return 0;
  const terms = new Set(analyze(`${words(tool.name)} ${tool.description}`));
  let overlap = 0;
  for (const t of asked) if (terms.has(t) && !GENERIC.has(t)) overlap++;
  const named = nameWords(tool.name).map(stem);
  // The tool's name said in another form ("multiplication" for multiply).
  for (const w of named) if (w.length >= 5 && !asked.has(w) && [...askedStems].some((a) => a !== w && a.startsWith(w.slice(0, 6)))) overlap += 0.5;
  for (const w of named) for (const synonym of SYNONYMS[w] ?? []) if (askedStems.has(stem(synonym))) overlap += 0.5;
  // Values of its enums named ("20 pounds in yen"), and parameter names said ("base", "height"), tell what is asked for too.
  overlap += 0.5 * enumMentions(tool, message);
  for (const p of Object.keys(tool.parameters.properties ?? {})) if (nameWords(p).some((w) => w.length > 2 && askedStems.has(stem(w)))) overlap += 0.25;
  return overlap;
}

const callId = (name: string, args: Record<string, unknown>) => `call_${createHash('sha256').update(`${name}\u0000${JSON.stringify(args)}`).digest('hex').slice(0, 16)}`;

/**
 * The call to make, a question for what is missing, or nothing (no tool fits). `toolChoice`:
 * `required` always calls (the best tool), a named function is always that one; told to call, a
 * required argument the message does not give is filled with a value of its type.
 */
export function decideToolCall(request: ChatRequest, answer: () => string = () => ''): ToolDecision {
  const tools = request.tools ?? [];
  const message = request.messages[request.messages.length - 1]?.content ?? '';
  if (tools.length === 0 || !message.trim()) return undefined;
  // Arithmetic is computed by the agent's code tool, when it has one.
  const code = request.toolChoice === undefined ? codeToolOf(tools) : undefined;
  const expression = code && (arithmeticOf(message) ?? groundedArithmeticOf(message, request.passages ?? []));
  if (code && expression) {
    const args = { source: `return ${expression};` };
    return { calls: [{ id: callId(code.name, args), name: code.name, arguments: args }] };
  }
  // "394 times 213" asks to multiply, not for a time.
  const text = message.replace(/(\d)\s*(?:times|x|\*|×)\s*(?=\d)/gi, '$1 multiplied by ');
  const said: Said = { text, asked: new Set(analyze(text)), askedStems: new Set((text.match(/[\p{L}\p{N}$€£]+/gu) ?? []).map(stem)), actions: actionsOf(text) };
  const scored = tools.map((tool) => ({ tool, overlap: relevance(tool, said) })).sort((a, b) => b.overlap - a.overlap);
  const searchTool = tools.find((t) => Object.keys(t.parameters.properties ?? {}).some((p) => QUERY_NAMES.has(p.toLowerCase())));
  const choice = request.toolChoice;
  const forced = choice !== undefined;
  const best =
    choice && choice !== 'required'
      ? tools.find((t) => t.name === choice.name)
      : scored[0]!.overlap > 0
        ? scored[0]!.tool
        : (searchTool ?? (choice === 'required' ? scored[0]!.tool : undefined));
  if (!best) return undefined;
  const { args, missing } = argumentsFor(best, message, new Date(request.now));
  // Told to call, it fills what the message does not give with values of their types: the call
  // matches the schema a client parses it with (a structured output asked as a function call).
  if (forced && missing.length > 0) {
    const properties = (best.parameters.properties ?? {}) as Record<string, PropertySchema>;
    const said = { question: message, answer: answer(), now: new Date(request.now) };
    for (const name of missing) if (properties[name]) args[name] = typedValue(name, properties[name], said);
  }
  // Asked to call, it calls with what it found; otherwise it asks for what is missing, naming it.
  if (missing.length > 0 && !forced) {
    const properties = (best.parameters.properties ?? {}) as Record<string, { description?: string }>;
    const first = missing[0]!;
    const what = properties[first]?.description ? `${words(first)} (${properties[first].description})` : words(first);
    return { ask: `To use ${words(best.name)} I need the ${what}. Could you give it to me?` };
  }
  // "Weather in Paris and London": one call for each value the message lists for a tool's one required parameter.
  const required = (best.parameters.required ?? []) as string[];
  const listed = required.length === 1 ? listedValues(best, required[0]!, message) : [];
  const calls = listed.length >= 2 ? listed.map((value) => ({ ...args, [required[0]!]: value })) : [args];
  return { calls: calls.map((a) => ({ id: callId(best.name, a), name: best.name, arguments: a })) };
}

/** The arguments for a tool: a query-like parameter takes the whole message; the rest are read from it. */
function argumentsFor(tool: ToolSpec, message: string, now: Date): { args: Record<string, unknown>; missing: string[] } {
  const filled = fillArguments(tool, message, now);
  const properties = (tool.parameters.properties ?? {}) as Record<string, { description?: string }>;
  for (const name of Object.keys(properties)) {
    // A parameter that asks for the message "in full" (what an agent or A2A tool passes on) takes all of it.
    const whole = /\bin full\b/i.test(properties[name]?.description ?? '');
    if (QUERY_NAMES.has(name.toLowerCase()) && (whole || !(name in filled.args))) {
      filled.args[name] = message;
      filled.missing = filled.missing.filter((m) => m !== name);
    }
  }
  return filled;
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
