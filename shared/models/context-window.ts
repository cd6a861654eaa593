import { type ChatMessage, type ChatModel, type ChatRequest, type ResolvedModel, type ToolRound } from './types';

/**
 * Every model has a context window; no request Cairn sends may pass it. The window of a model is
 * its provider entry's `contextWindows[model]` or `contextWindow` (MODEL_PROVIDERS, set when the
 * model is resolved), else a known default for common models, else a cautious 8,192. A request that would use more than 80% of its
 * model's window (so the reply has room) is fitted before it is sent: the older conversation is
 * summarized, then old tool results are cut short, then the weakest passages go, then the oldest
 * messages — so a model down a fallback chain with a smaller window gets a request fitted to it.
 * Tokens are estimated on the safe side (windowTokens): a tokenizer's count differs by model.
 */
export const WINDOW_SHARE = 0.8;

/** The built-in engine's window: it reads what it is given, but a conversation must stay bounded for it too. */
export const LOCAL_CONTEXT_WINDOW = 16_384;
const UNKNOWN_CONTEXT_WINDOW = 8_192;

/** Known windows of common models (tokens), by the model's own name; the first that matches. */
const KNOWN_WINDOWS: Array<[RegExp, number]> = [
  [/gpt-4\.1/, 1_047_576],
  [/gpt-5/, 400_000],
  [/gpt-4o|gpt-4-turbo|gpt-4-1106|gpt-4-0125|(^|\/)o[134](-|$)/, 128_000],
  [/gpt-4-32k/, 32_768],
  [/gpt-4(-\d{4})?$/, 8_192],
  [/gpt-3\.5-turbo/, 16_385],
  [/claude/, 200_000],
  [/nova-(pro|lite)/, 300_000],
  [/nova-micro/, 128_000],
  [/llama-?3\.[123]|llama3-[123]|command-r|mistral-large|qwen2\.5-.*-instruct-1m/, 128_000],
  [/mixtral|mistral|qwen/, 32_768],
  [/titan-text|gemma/, 8_192],
];

/** The context window (tokens) of a model: its provider entry's setting, else the known default of its name. */
export function contextWindowOf(resolved: Pick<ResolvedModel, 'name' | 'contextWindow'>): number {
  if (resolved.contextWindow) return resolved.contextWindow;
  const slash = resolved.name.indexOf('/');
  if (resolved.name.slice(0, slash) === 'local') return LOCAL_CONTEXT_WINDOW;
  const model = resolved.name.slice(slash + 1);
  return KNOWN_WINDOWS.find(([pattern]) => pattern.test(model))?.[1] ?? UNKNOWN_CONTEXT_WINDOW;
}

/**
 * Tokens of a text, estimated on the high side without a tokenizer: 4 ASCII characters a token
 * (English prose runs 4–5), every other character a token of its own (CJK text takes about one a
 * character; accented letters split the words they are in).
 */
export function windowTokens(text: string): number {
  let other = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) other++;
  return Math.ceil((text.length - other) / 4) + other;
}

/** The tokens a request's input takes (instructions, memory, passages, tools, conversation, tool rounds). */
export function requestTokens(request: ChatRequest): number {
  const parts = [
    request.instructions ?? '',
    request.summary ?? '',
    ...(request.memory ?? []),
    ...(request.passages ?? []).map((p) => `${p.title}\n${p.text}`),
    request.tools?.length ? JSON.stringify(request.tools) : '',
    ...request.messages.map((m) => m.content),
    ...(request.toolRounds ?? []).flatMap((r) => [JSON.stringify(r.calls), ...r.results.map((x) => x.content)]),
  ];
  return parts.reduce((sum, part) => sum + windowTokens(part), 0) + request.messages.length * 4;
}

/** The first sentence of a text (at most `max` characters): what an extractive summary keeps of a turn. */
function gist(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentence = /^.*?(?:[.!?](?=\s|$)|[。！？])/.exec(flat)?.[0] ?? flat;
  return sentence.length <= max ? sentence : `${sentence.slice(0, max).replace(/\s+\S*$/, '')}…`;
}

/**
 * The built-in engine's summary of turns, offline and deterministic: each turn's first sentence, who
 * said it, oldest first, after the lines of an `earlier` summary, within `maxTokens` (the most
 * recent lines kept when they do not all fit).
 */
export function extractiveSummary(messages: ChatMessage[], maxTokens = 1000, earlier?: string): string {
  const turns = messages.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${gist(m.content, 240)}`).filter((l) => !l.endsWith(': '));
  return latestLines([...(earlier ? earlier.split('\n') : []), ...turns], maxTokens);
}

/** The last lines that fit in `maxTokens`, in their order. */
function latestLines(lines: string[], maxTokens: number): string {
  const kept: string[] = [];
  let size = 0;
  for (const line of [...lines].reverse()) {
    const tokens = windowTokens(line) + 1;
    if (size + tokens > maxTokens) break;
    kept.unshift(line);
    size += tokens;
  }
  return kept.join('\n');
}

const ROUNDS_HEADING = 'Tools called earlier in this turn (summarized):';

/** Messages kept whole when older ones are summarized (the user's last message among them). */
const KEEP_MESSAGES = 6;
/** Tool rounds kept whole when older ones are folded into the summary. */
const KEEP_ROUNDS = 2;
/** What of an old tool result is kept when results must be cut. */
const RESULT_HEAD = 600;

/** A tool result cut to its start, saying how much was left out (a window, or a run's checkpoint, too small for it whole). */
export const shortenedResult = (content: string) =>
  content.length > RESULT_HEAD ? `${content.slice(0, RESULT_HEAD)}… [cut: ${content.length - RESULT_HEAD} more characters]` : content;

/** One line per call of earlier tool rounds: the call and the start of what it returned. */
const roundLines = (rounds: ToolRound[]) =>
  rounds.flatMap((round) =>
    round.calls.map((call) => {
      const result = round.results.find((r) => r.id === call.id)?.content ?? '';
      return `- ${call.name}(${gist(JSON.stringify(call.arguments ?? {}), 160)}) → ${gist(result, 200)}`;
    }),
  );

/**
 * A request that fits `window` (its input at most 80% of it), changed as little as it takes, in
 * this order: the conversation before the last few messages summarized (with the summary it had);
 * old tool results cut to their start; tool rounds before the last two folded into the
 * instructions, a line a call; the weakest passages left out; the oldest messages left out; the
 * last rounds' results, the summary, the last message (to its end) and the instructions cut. `maxTokens` never asks for more than the window leaves.
 */
export function fitToWindow(request: ChatRequest, window: number): ChatRequest {
  const budget = Math.floor(window * WINDOW_SHARE);
  let fitted = request;
  const fits = () => requestTokens(fitted) <= budget;
  // A summary, or the lines of folded tool rounds, take at most a fifth of the budget each.
  const summaryTokens = Math.max(100, Math.floor(budget * 0.2));
  if (!fits() && fitted.messages.length > KEEP_MESSAGES) {
    const older = fitted.messages.slice(0, -KEEP_MESSAGES);
    fitted = { ...fitted, messages: fitted.messages.slice(-KEEP_MESSAGES), summary: extractiveSummary(older, summaryTokens, fitted.summary) };
  }
  const rounds = fitted.toolRounds ?? [];
  for (let i = 0; !fits() && i < rounds.length - 1; i++) {
    fitted = { ...fitted, toolRounds: fitted.toolRounds!.map((round, j) => (j > i ? round : { ...round, results: round.results.map((r) => ({ ...r, content: shortenedResult(r.content) })) })) };
  }
  if (!fits() && rounds.length > KEEP_ROUNDS) {
    const older = fitted.toolRounds!.slice(0, -KEEP_ROUNDS);
    const folded = `${ROUNDS_HEADING}\n${latestLines(roundLines(older), summaryTokens)}`;
    fitted = { ...fitted, toolRounds: fitted.toolRounds!.slice(-KEEP_ROUNDS), instructions: [fitted.instructions, folded].filter(Boolean).join('\n\n') };
  }
  while (!fits() && (fitted.passages?.length ?? 0) > 1) fitted = { ...fitted, passages: fitted.passages!.slice(0, -1) };
  while (!fits() && fitted.messages.length > 1) fitted = { ...fitted, messages: fitted.messages.slice(1) };
  // What is left is the question, the last rounds and the instructions: cut each, largest last.
  const over = () => requestTokens(fitted) - budget;
  if (!fits() && fitted.toolRounds?.length) {
    fitted = { ...fitted, toolRounds: fitted.toolRounds.map((round) => ({ ...round, results: round.results.map((r) => ({ ...r, content: shortenedResult(r.content) })) })) };
  }
  if (!fits() && fitted.summary) fitted = { ...fitted, summary: latestLines(fitted.summary.split('\n'), Math.max(0, windowTokens(fitted.summary) - over())) };
  if (!fits()) {
    const last = fitted.messages[fitted.messages.length - 1]!;
    fitted = { ...fitted, messages: [...fitted.messages.slice(0, -1), { ...last, content: last.content.slice(Math.min(last.content.length - 1, over() * 4)) }] };
  }
  if (!fits() && fitted.instructions) fitted = { ...fitted, instructions: fitted.instructions.slice(0, Math.max(0, fitted.instructions.length - over() * 4)) };
  const room = window - requestTokens(fitted);
  return fitted.maxTokens > room ? { ...fitted, maxTokens: Math.max(1, room) } : fitted;
}

/** The model with every request fitted to its window first. */
export function windowed(resolved: ResolvedModel): ResolvedModel {
  const window = contextWindowOf(resolved);
  const { engine } = resolved;
  const fit = (request: ChatRequest) => fitToWindow(request, window);
  const fitted: ChatModel = {
    provider: engine.provider,
    supportsTools: engine.supportsTools,
    generate: (request, signal) => engine.generate(fit(request), signal),
    stream: (request, signal) => engine.stream(fit(request), signal),
  };
  return { ...resolved, engine: fitted };
}
