import { analyze } from '../search/analyzer';
import { findPii, type PiiEntity, type PiiMatch } from './pii';
import { DEFAULT_BLOCKED_MESSAGE, type Guardrails } from './settings';

/** What a guardrail found, as replies, spans and usage report it. */
export interface Finding {
  type: 'pii' | 'denied_topic' | 'blocked_word';
  /** The topic, or the blocked word. */
  name?: string;
  entity?: PiiEntity;
  action: 'tokenize' | 'mask' | 'block';
  where: 'input' | 'output' | 'tool_result';
  /** False in detect mode: reported, nothing changed. */
  enforced: boolean;
}

const TOKEN = /<([A-Z_]+)_(\d+)>/g;

/** Any JSON with each of its strings through `fn` (tool arguments, tool rounds). */
export function mapStrings<T>(value: T, fn: (text: string) => string): T {
  if (typeof value === 'string') return fn(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => mapStrings(v, fn)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)])) as T;
  return value;
}

/** Text with each match replaced, right to left so earlier offsets stay true. */
function replaced(text: string, matches: PiiMatch[], by: (m: PiiMatch) => string): string {
  let out = text;
  for (const m of [...matches].reverse()) out = out.slice(0, m.start) + by(m) + out.slice(m.end);
  return out;
}
const label = (entity: PiiEntity) => entity.toUpperCase();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where a stream may be cut: after a sentence or a line (no personal value spans one). */
const BOUNDARY = /[.!?](?=\s)\s+|\n+/g;

/**
 * One turn's guardrails: what the provider is given (personal values tokenized or masked, a
 * refused message never sent), what the person is shown (tokens restored, new values in the reply
 * masked, a blocked reply replaced) and everything found on the way. Tokens are stable within a
 * session: the vault (token → value) is kept sealed with the session, so a value gets the same token
 * on every turn and the provider never sees it.
 */
export class Guard {
  readonly findings: Finding[] = [];
  /** The turn is refused: its reply is the blocked message. */
  blocked = false;
  /** New tokens were made this turn (the vault must be saved). */
  vaultChanged = false;
  private readonly seen = new Set<string>();
  /** Values the person (or a tool) gave this turn: a reply may repeat them. */
  private readonly given = new Set<string>();
  private readonly byValue = new Map<string, string>();
  private readonly byToken = new Map<string, string>();
  private readonly topics: Array<{ name: string; phrases: string[][] }>;
  private readonly words?: RegExp;
  readonly enforce: boolean;

  constructor(
    readonly settings: Guardrails,
    vault: Record<string, string> = {},
  ) {
    this.enforce = settings.mode !== 'detect';
    for (const [token, value] of Object.entries(vault)) {
      this.byToken.set(token, value);
      this.byValue.set(value, token);
    }
    this.topics = (settings.deniedTopics ?? []).map((t) => ({ name: t.name, phrases: t.phrases.map(analyze) }));
    const words = settings.blockedWords ?? [];
    if (words.length > 0) this.words = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escape).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  }

  get blockedMessage(): string {
    return this.settings.blockedMessage ?? DEFAULT_BLOCKED_MESSAGE;
  }

  /** The vault to keep with the session (token → value). */
  vault(): Record<string, string> {
    return Object.fromEntries(this.byToken);
  }

  private report(finding: Omit<Finding, 'enforced'>, key: string) {
    const id = `${finding.type}|${finding.where}|${finding.name ?? finding.entity}|${key}`;
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.findings.push({ ...finding, enforced: this.enforce });
  }

  /** A denied topic or a blocked word in the person's message: the turn is refused (no provider call). */
  checkMessage(text: string): boolean {
    const terms = this.topics.length > 0 ? analyze(text) : [];
    for (const topic of this.topics) {
      if (topic.phrases.some((p) => containsRun(terms, p))) this.report({ type: 'denied_topic', name: topic.name, action: 'block', where: 'input' }, '');
    }
    for (const word of this.wordsIn(text)) this.report({ type: 'blocked_word', name: word, action: 'block', where: 'input' }, '');
    const refused = this.findings.some((f) => f.where === 'input' && f.action === 'block' && f.type !== 'pii');
    if (refused && this.enforce) this.blocked = true;
    return this.blocked;
  }

  private wordsIn(text: string): string[] {
    return this.words ? [...new Set([...text.matchAll(this.words)].map((m) => m[0].toLowerCase()))] : [];
  }

  private tokenFor(entity: PiiEntity, value: string): string {
    const known = this.byValue.get(value);
    if (known) return known;
    const n = [...this.byToken.keys()].filter((t) => t.startsWith(`<${label(entity)}_`)).length + 1;
    const token = `<${label(entity)}_${n}>`;
    this.byToken.set(token, value);
    this.byValue.set(value, token);
    this.vaultChanged = true;
    return token;
  }

  /**
   * Personal values in text on its way to the provider (`input`: the conversation; `tool_result`:
   * what a tool returned): tokenized or masked; with `block`, an input value refuses the turn and
   * a tool result is withheld. Blocked words in a tool result withhold it too.
   */
  protect(text: string, where: 'input' | 'tool_result'): string {
    const pii = this.settings.pii;
    if (where === 'tool_result') {
      const words = this.wordsIn(text);
      for (const word of words) this.report({ type: 'blocked_word', name: word, action: 'block', where }, '');
      if (words.length > 0 && this.enforce) return 'The tool result was withheld by the agent’s guardrails (a blocked word).';
    }
    if (!pii) return text;
    const matches = findPii(text, pii.entities);
    if (matches.length === 0) return text;
    for (const m of matches) {
      this.report({ type: 'pii', entity: m.entity, action: pii.action, where }, m.value);
      this.given.add(m.value);
    }
    if (!this.enforce) return text;
    if (pii.action === 'block') {
      if (where === 'input') this.blocked = true;
      return where === 'input' ? text : `The tool result was withheld by the agent’s guardrails (it holds ${[...new Set(matches.map((m) => m.entity))].join(', ')}).`;
    }
    return this.hidden(text, matches, pii.action);
  }

  /** Values replaced: by their tokens, or masked. */
  private hidden(text: string, matches: PiiMatch[], action: 'tokenize' | 'mask' | 'block'): string {
    return replaced(text, matches, (m) => (action === 'tokenize' ? this.tokenFor(m.entity, m.value) : `[${label(m.entity)}]`));
  }

  /** Text as the session keeps it: personal values tokenized or masked (blocked values masked), nothing reported. */
  forStorage(text: string): string {
    const pii = this.settings.pii;
    if (!pii || !this.enforce) return text;
    return this.hidden(text, findPii(text, pii.entities), pii.action);
  }

  /** JSON as the session keeps it: each string through `forStorage`. */
  storedJson<T>(value: T): T {
    return mapStrings(value, (text) => this.forStorage(text));
  }

  /** Tokens back to their values (for the person, and for the arguments of the tools that act on them). */
  restore(text: string): string {
    if (this.byToken.size === 0) return text;
    return text.replace(TOKEN, (token) => this.byToken.get(token) ?? token);
  }

  restoreArgs<T>(value: T): T {
    return this.byToken.size === 0 ? value : mapStrings(value, (text) => this.restore(text));
  }

  /**
   * The model's reply as the person sees it: tokens restored; a blocked word refuses it (the
   * blocked message instead); a personal value the person did not give is masked, or with
   * `block`, refuses it.
   */
  checkOutput(text: string): string {
    for (const word of this.wordsIn(text)) this.report({ type: 'blocked_word', name: word, action: 'block', where: 'output' }, '');
    if (this.enforce && this.findings.some((f) => f.where === 'output' && f.type === 'blocked_word')) {
      this.blocked = true;
      return this.blockedMessage;
    }
    const pii = this.settings.pii;
    const restored = this.restore(text);
    if (!pii) return restored;
    // Values the person gave come back restored; any other is the model's (or a tool's) and is not shown.
    const matches = findPii(restored, pii.entities).filter((m) => !this.given.has(m.value) && !this.byValue.has(m.value));
    for (const m of matches) this.report({ type: 'pii', entity: m.entity, action: pii.action === 'block' ? 'block' : 'mask', where: 'output' }, m.value);
    if (!this.enforce || matches.length === 0) return restored;
    if (pii.action === 'block') {
      this.blocked = true;
      return this.blockedMessage;
    }
    return this.hidden(restored, matches, 'mask');
  }

  /**
   * A streamed reply checked as it comes: text is let through a sentence (or line) at a time, each
   * checked and restored whole, so a token or a value split across deltas is handled whole. After
   * a blocked word nothing more is let through.
   */
  stream(): { push(delta: string): string; end(): string } {
    let held = '';
    const release = (text: string) => {
      if (this.blocked || text === '') return '';
      const checked = this.checkOutput(text);
      return this.blocked ? '' : checked;
    };
    return {
      push: (delta) => {
        held += delta;
        let cut = -1;
        for (const m of held.matchAll(BOUNDARY)) cut = m.index + m[0].length;
        if (cut < 0) return '';
        const ready = held.slice(0, cut);
        held = held.slice(cut);
        return release(ready);
      },
      end: () => {
        const rest = release(held);
        held = '';
        return rest;
      },
    };
  }
}

/** Whether `terms` holds `run` in order, next to each other. */
function containsRun(terms: string[], run: string[]): boolean {
  if (run.length === 0) return false;
  outer: for (let i = 0; i + run.length <= terms.length; i++) {
    for (let j = 0; j < run.length; j++) if (terms[i + j] !== run[j]) continue outer;
    return true;
  }
  return false;
}
