/**
 * How the built-in engine fills a tool's arguments from a message, by reading it as a sentence:
 * it finds the values the message holds (quoted strings, numbers and number words, names and
 * places, identifiers, e-mails, URLs, dates), and gives each parameter the value of its type that
 * stands nearest the words that name the parameter ("from 100 USD to EUR", "an element 'myButton'",
 * "a base of 10"). A value goes to one parameter only; an optional parameter is filled only when
 * the message gives it; a required one the message does not give is missing (the engine asks),
 * never filled with a word that only has its shape.
 */
export type PropertySchema = {
  type?: string | string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  description?: string;
  items?: PropertySchema;
  default?: unknown;
  properties?: Record<string, PropertySchema>;
  required?: string[];
};

interface Token {
  text: string;
  /** Lowercased and lightly stemmed, for matching the words that name a parameter. */
  stem: string;
  /** Character offset in the message. */
  at: number;
}

type Kind = 'quoted' | 'number' | 'name' | 'ident' | 'email' | 'url' | 'date';
interface Candidate {
  kind: Kind;
  value: string | number;
  /** Token index where it starts and ends (inclusive). */
  first: number;
  last: number;
  /** Said as a percentage ("5%"). */
  percent?: boolean;
}

const STOP = new Set(['the', 'a', 'an', 'of', 'and', 'or', 'is', 'are', 'be', 'with', 'that', 'this', 'it', 'me', 'my', 'i', 'you', 'your', 'please', 'can', 'could', 'would', 'will', 'what', 'which', 'for', 'on', 'by', 'as', 'at', 'do', 'get', 'set', 'some', 'any', 'all']);

/** Lowercase, and the common English endings taken off (weathers/weather, aligned/align, cities/city). */
export function stem(word: string): string {
  const w = word.toLowerCase();
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('es') && /(ch|sh|x|ss)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** A parameter or tool name as words: `fromCurrency`, `from_currency`, `uber.ride` → from currency. */
export const nameWords = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.\-]+/g, ' ')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);

function tokenize(message: string): Token[] {
  return [...message.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’.@:/_+-]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu)].map((m) => {
    const text = m[0].replace(/[.:]+$/, '');
    return { text, stem: stem(text.replace(/['’]s$/, '')), at: m.index };
  });
}

const tokenAt = (tokens: Token[], offset: number) => {
  let i = 0;
  while (i + 1 < tokens.length && tokens[i + 1]!.at <= offset) i++;
  return i;
};

const NUMBER_WORDS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15,
  sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19, twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90, hundred: 100, thousand: 1000,
  dozen: 12, half: 0.5, twice: 2, thrice: 3, a: NaN,
};

/** Words that open a sentence or a request: capitalised there, they are not names. */
const COMMON = new Set(
  'what whats where when who why how which can could would will should shall may might please help find get show tell give calculate compute i im ive id hi hello hey is are do does did the a an my we our let lets make create set book order send list check convert search look fetch retrieve provide generate write use run need want like also and or but if in on at to for from with by of it this that these those there here yes no ok okay sure thanks thank you your me us they he she his her its go add remove delete update change turn open close start stop play call email text buy sell pay move copy read reserve schedule cancel plan display return count sort filter validate implement given assume suppose consider'.split(
    ' ',
  ),
);

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\\.?';
const WORDED_DATE = new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b|\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\s*,?\\s+(\\d{4})\\b`, 'gi');

/** The values a message holds, each with where it stands. */
function candidatesOf(message: string, tokens: Token[]): Candidate[] {
  const out: Candidate[] = [];
  const taken = new Set<number>();
  const add = (kind: Kind, value: string | number, from: number, to: number) => {
    const first = tokenAt(tokens, from);
    const last = Math.max(first, tokenAt(tokens, Math.max(from, to - 1)));
    for (let i = first; i <= last; i++) taken.add(i);
    out.push({ kind, value, first, last });
  };
  // Quoted: the quote opens at a word's start and closes at a word's end ("I'd" holds no quote).
  for (const m of message.matchAll(/(?<![\p{L}\p{N}])(?:"([^"]+)"|'([^']+)'|`([^`]+)`|“([^”]+)”|‘([^’]+)’)(?![\p{L}\p{N}])/gu)) {
    // Its tokens start after the opening quote (the word before it names it, and is not part of it).
    add('quoted', (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5])!.trim(), m.index + 1, m.index + m[0].length - 1);
  }
  for (const m of message.matchAll(/https?:\/\/[^\s"'`<>]+/g)) if (!taken.has(tokenAt(tokens, m.index))) add('url', m[0].replace(/[.,;)]+$/, ''), m.index, m.index + m[0].length);
  for (const m of message.matchAll(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g)) if (!taken.has(tokenAt(tokens, m.index))) add('email', m[0], m.index, m.index + m[0].length);
  for (const m of message.matchAll(/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b/g)) if (!taken.has(tokenAt(tokens, m.index))) add('date', m[0], m.index, m.index + m[0].length);
  // "March 10th, 2023", "10 March 2023": a date with its year, as an ISO date.
  for (const m of message.matchAll(WORDED_DATE)) {
    if (taken.has(tokenAt(tokens, m.index))) continue;
    const month = MONTH_NAMES.indexOf(((m[1] ?? m[5])!).slice(0, 3).toLowerCase()) + 1;
    const day = Number(m[2] ?? m[4]);
    if (month > 0 && day >= 1 && day <= 31) add('date', `${m[3] ?? m[6]}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`, m.index, m.index + m[0].length);
  }
  tokens.forEach((t, i) => {
    if (taken.has(i)) return;
    const lower = t.text.toLowerCase();
    // Numbers: digits (with a currency sign, thousands commas, a unit or % after them) and number words.
    const digits = /^[$€£]?(-?\d[\d,]*(?:\.\d+)?)(%|[a-z]{0,3})?$/i.exec(t.text);
    if (digits && !/[a-z]{4,}/i.test(t.text)) {
      taken.add(i);
      // An exponent of a unit or formula ("m/s^2", "x^2") is not a value.
      if (message[t.at - 1] === '^') return;
      const percent = digits[2] === '%' || /^\s*(%|percent\b|per cent\b)/i.test(message.slice(t.at + t.text.length));
      // A minus sign before the digits ("b=-3", "to -5"), not a hyphen between words or numbers ("10-20").
      const negative = message[t.at - 1] === '-' && !/[\p{L}\p{N}]/u.test(message[t.at - 2] ?? '');
      const value = Number(digits[1]!.replace(/,/g, ''));
      out.push({ kind: 'number', value: negative ? -value : value, first: i, last: i, ...(percent ? { percent } : {}) });
      return;
    }
    if (lower in NUMBER_WORDS && !Number.isNaN(NUMBER_WORDS[lower]!) && lower !== 'a') {
      taken.add(i);
      // A count of the values that follow ("the other two sides as 4 and 5", "two numbers: 40 and 50") is not one of them.
      const value = NUMBER_WORDS[lower]!;
      const counted = value >= 2 && /s$/i.test(tokens[i + 1]?.text ?? '') && tokens.slice(i + 2).filter((u) => /^[$€£]?-?\d/.test(u.text)).length >= value;
      if (!counted) out.push({ kind: 'number', value, first: i, last: i });
      return;
    }
    // Identifiers: letters with digits (ZX9, A17, v2), camelCase (myItemList), snake_case, dotted or slashed (owner/repo).
    if (/\d/.test(t.text) && /\p{L}/u.test(t.text) && t.text.length >= 2) {
      taken.add(i);
      out.push({ kind: 'ident', value: t.text, first: i, last: i });
      return;
    }
    if (/^[a-z]+[A-Z]\w*$/.test(t.text) || /^\w+[_/]\w+/.test(t.text)) {
      taken.add(i);
      out.push({ kind: 'ident', value: t.text, first: i, last: i });
    }
  });
  // Names: runs of capitalised words ("Buenos Aires", "Tel Aviv"), with ", CA" or ", France" after them;
  // a capitalised common word (a sentence's "What", "Help") is not one.
  for (let i = 0; i < tokens.length; i++) {
    if (taken.has(i)) continue;
    const isName = (t: Token | undefined) => t !== undefined && /^\p{Lu}/u.test(t.text) && !COMMON.has(t.text.toLowerCase().replace(/['’]/g, ''));
    if (!isName(tokens[i])) continue;
    let j = i;
    // After the first word, any capitalised word goes on the name ("Product A").
    const goesOn = (t: Token | undefined) => t !== undefined && /^\p{Lu}/u.test(t.text);
    while (j + 1 < tokens.length && !taken.has(j + 1) && goesOn(tokens[j + 1]) && message.slice(tokens[j]!.at + tokens[j]!.text.length, tokens[j + 1]!.at).trim() === '') j++;
    // ", CA" / ", Tamil Nadu" after a place; not the next item of a list ("Product A, Product B").
    const next = tokens[j + 1];
    if (next && !taken.has(j + 1) && isName(next) && next.text !== tokens[i]!.text && /^\s*,\s*$/.test(message.slice(tokens[j]!.at + tokens[j]!.text.length, next.at))) {
      let k = j + 1;
      while (k + 1 < tokens.length && !taken.has(k + 1) && isName(tokens[k + 1]) && message.slice(tokens[k]!.at + tokens[k]!.text.length, tokens[k + 1]!.at).trim() === '') k++;
      const after = tokens[k + 1];
      const listGoesOn = after !== undefined && isName(after) && /^\s*,\s*$/.test(message.slice(tokens[k]!.at + tokens[k]!.text.length, after.at));
      if (!listGoesOn) j = k;
    }
    const value = message.slice(tokens[i]!.at, tokens[j]!.at + tokens[j]!.text.length);
    for (let k = i; k <= j; k++) taken.add(k);
    out.push({ kind: 'name', value, first: i, last: j });
    i = j;
  }
  return out;
}

/** The default a parameter's schema or description gives ("Default is 'metric'."), as its type. */
function documentedDefault(schema: PropertySchema, type: string): unknown {
  const documented = schema.default ?? /\bdefaults?(?: value)?(?: is| to|:)\s*['"]?([\w.-]*\w)/i.exec(schema.description ?? '')?.[1];
  return documented === undefined ? undefined : asType(documented, type);
}

/** A documented default as the parameter's type: "true" for a boolean, "6" for an integer; undefined when it is not one. */
function asType(value: unknown, type: string): unknown {
  if (typeof value !== 'string') return value;
  if (type === 'boolean') return /^(true|false)$/i.test(value) ? value.toLowerCase() === 'true' : undefined;
  if (type === 'integer' || type === 'number') {
    const n = Number(value.replace(/\.$/, ''));
    return Number.isFinite(n) && (type === 'number' || Number.isInteger(n)) ? n : undefined;
  }
  return type === 'string' ? value.replace(/\.$/, '') : undefined;
}

/** Type names as clients write them, JSON Schema's or a language's ("Boolean", "int", "float", "dict", "list"). */
const TYPE_NAMES: Record<string, string> = { bool: 'boolean', boolean: 'boolean', str: 'string', string: 'string', char: 'string', int: 'integer', integer: 'integer', long: 'integer', short: 'integer', float: 'number', double: 'number', number: 'number', dict: 'object', map: 'object', object: 'object', hashmap: 'object', list: 'array', array: 'array', tuple: 'array', arraylist: 'array' };
const typeOf = (schema: PropertySchema): string => {
  const named = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? 'string') : (schema.type ?? 'string');
  return TYPE_NAMES[named.toLowerCase()] ?? named;
};

/** Parameters that take the first of a pair ("from", "between … and") and those that take the second. */
const ORIGIN = /\b(origin|source|from|start|starting|departure|depart|first|begin|beginning)\b/i;
const DESTINATION = /\b(destination|target|to|end|ending|arrival|arrive|second|until)\b/i;

/** Words that name a place: a parameter about one may take a lowercase word after in/at/to ("in tokyo"). */
const PLACE = /\b(city|location|place|town|destination|origin|country|region|address|where)\b/i;

/**
 * The words that name a parameter in a message: its own name's, and its description's first
 * content words (not the tool's own: they say what the tool is, not which value is this one's); a
 * place is named by the preposition before it ("in Mumbai").
 */
function cuesOf(name: string, schema: PropertySchema, toolWords: Set<string>): Map<string, number> {
  const cues = new Map<string, number>();
  for (const w of nameWords(name)) if (!STOP.has(w) || /^(from|to|in|into|start|end|min|max)$/.test(w)) cues.set(stem(w), 1);
  const description = (schema.description ?? '').split(/[.;(]/)[0]!;
  for (const w of description.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (!STOP.has(w) && w.length > 2 && !cues.has(stem(w)) && !toolWords.has(stem(w))) cues.set(stem(w), 0.5);
  }
  if (PLACE.test(`${nameWords(name).join(' ')} ${schema.description ?? ''}`)) for (const w of ['in', 'at', 'near']) if (!cues.has(w)) cues.set(w, 0.6);
  return cues;
}

/** Free text a parameter takes whole (a to-do's content, a message's body): what follows a colon or the word that names it. */
const FREE_TEXT = /^(content|text|message|body|note|notes|description|title|request|prompt|comment|instructions?|modification_request|subject)$/i;

/**
 * Options a description lists in quotes, each followed by what it does ("'add' to add a task,
 * 'delete' to remove one"): an enum the schema did not declare.
 */
function describedOptions(description: string | undefined): string[] | undefined {
  const options = [...(description ?? '').matchAll(/['"]([\w-]{1,30})['"]\s+(?:to|for|means|=|:)\s/g)].map((m) => m[1]!);
  return options.length >= 2 ? options : undefined;
}

/** The examples a description lists ("e.g. vegetarian, vegan, gluten free", "such as 'EUR' or 'USD'"). */
function describedExamples(description: string | undefined): string[] {
  const m = /\b(?:e\.g\.?|eg\.|such as|for example|for instance|options(?: are)?:?|one of:?)\s*(.+?)(?:[.;)]\s|[.;)]?$)/i.exec(description ?? '');
  // Without such words, values a description quotes as alternatives ("'km' or 'miles'").
  if (!m) return [...(description ?? '').matchAll(/['"“]([\w -]{1,30})['"”]\s*(?:,|or|and|\/)\s*['"“]([\w -]{1,30})['"”]/g)].flatMap((q) => [q[1]!, q[2]!]);
  // Quoted examples are taken whole ("'Berkeley, CA'"); others are split at commas.
  const quoted = [...m[1]!.matchAll(/['"“]([^'"”]{2,40})['"”]/g)].map((q) => q[1]!.trim());
  if (quoted.length > 0) return quoted;
  return m[1]!
    .split(/\s*,\s*|\s+or\s+|\s+and\s+/)
    .map((e) => e.replace(/^['"“]|['"”]$/g, '').trim())
    .filter((e) => e.length >= 2 && e.split(/\s+/).length <= 3 && !/^(etc|others?)$/i.test(e));
}

/** How much a word names a parameter: a cue itself, or a cue said in another form ("accelerates" for acceleration), a little less. */
function cueWeight(cues: Map<string, number>, word: string): number | undefined {
  const exact = cues.get(word);
  if (exact !== undefined || word.length < 6) return exact;
  for (const [cue, weight] of cues) if (cue.length >= 6 && cue.slice(0, 6) === word.slice(0, 6) && Math.abs(cue.length - word.length) <= 4) return weight * 0.8;
  return undefined;
}

/** How near a value stands to the words naming a parameter: 1 right beside one, less further away, 0 when none is said. */
function nearness(tokens: Token[], cues: Map<string, number>, c: Candidate, message: string): number {
  let best = 0;
  tokens.forEach((t, i) => {
    const weight = cueWeight(cues, t.stem);
    if (!weight || (i >= c.first && i <= c.last)) return;
    const gap = i < c.first ? c.first - i : i - c.last;
    // A naming word before the value ("base of 10", "element 'myButton'") counts a little more than one after it,
    // but a number's noun right after it ("3 bedrooms") is what it counts; a comma between them parts them.
    const counted = i === c.last + 1 && c.kind === 'number';
    const parted = /,/.test(i < c.first ? message.slice(tokens[i]!.at, tokens[c.first]!.at) : message.slice(tokens[c.last]!.at, tokens[i]!.at));
    const score = ((weight * (counted ? 1.1 : i < c.first ? 1 : 0.8)) / gap) * (parted ? 0.5 : 1);
    if (score > best) best = score;
  });
  return best;
}

/** A string value's candidates, best kinds first; a number only for parameters that are codes or ids. */
function fitsString(name: string, schema: PropertySchema, c: Candidate, toolWords: Set<string>): boolean {
  if (schema.format === 'email') return c.kind === 'email';
  if (schema.format === 'uri' || schema.format === 'url') return c.kind === 'url';
  if (schema.format === 'date' || schema.format === 'date-time') return c.kind === 'date' || c.kind === 'quoted';
  const value = String(c.value);
  if (schema.pattern) {
    try {
      if (!new RegExp(schema.pattern, 'u').test(value)) return false;
    } catch {
      return false;
    }
  }
  // A word that only repeats the tool's own name ("Weather" for get_weather) is not a value.
  if (c.kind === 'name' && value.split(/\s+/).every((w) => toolWords.has(stem(w)))) return false;
  const about = `${nameWords(name).join(' ')} ${schema.description ?? ''}`;
  const words = nameWords(name);
  // A date is a value for a parameter about dates or times only (not a search's prompt).
  if (c.kind === 'date' && !/\b(date|time|day|when|start|end|from|until|deadline|birth|since|after|before|schedule|due)/i.test(about)) return false;
  if (words.includes('email')) return c.kind === 'email' || (c.kind === 'quoted' && value.includes('@'));
  // An id is an identifier, a number or a quoted value, never a plain word ("M", "UK", "There's").
  if (words[words.length - 1] === 'id' && c.kind === 'name') return false;
  // A date or time is one (an ISO date, or quoted digits), not a name.
  if ((words.includes('date') || words.includes('time')) && !schema.format) return c.kind === 'date' || (c.kind === 'quoted' && /\d/.test(value));
  // A link is a URL; a place is a name (or quoted words), never an identifier or a lone letter.
  if (/\b(url|uri|link|endpoint)\b/i.test(nameWords(name).join(' '))) return c.kind === 'url';
  if (PLACE.test(about) && !/\b(id|code|ip)\b/i.test(about)) return (c.kind === 'name' || c.kind === 'quoted') && /^[\p{L}][\p{L} ,.'’-]+$/u.test(value) && !/[_]/.test(value);
  if (c.kind === 'number') return /(id|number|no|code|zip|postal|phone|year|version)$/i.test(name) || /\b(id|code|zip|number)\b/i.test(schema.description ?? '');
  return true;
}

/** Whether a value may be a parameter's, by the parameter's type (a list's by its items'). */
function fitsParameter(name: string, schema: PropertySchema, c: Candidate, toolWords: Set<string>): boolean {
  const type = typeOf(schema);
  if (type === 'integer') return c.kind === 'number' && Number.isInteger(c.value);
  if (type === 'number') return c.kind === 'number';
  if (type === 'string') return fitsString(name, schema, c, toolWords);
  if (type !== 'array') return false;
  const itemType = typeOf(schema.items ?? {});
  return itemType === 'number' || itemType === 'integer' ? c.kind === 'number' : fitsString(name, schema.items ?? {}, c, toolWords);
}

/** A value as a parameter takes it: a number for a string parameter (a case number) as its digits, "5%" as 0.05 for a rate the tool takes as a decimal. */
function valueFor(schema: PropertySchema, c: Candidate): unknown {
  if (typeOf(schema) === 'string') return String(c.value);
  return c.percent && typeof c.value === 'number' && /\b(decimal|fraction)\b|between 0 and 1/i.test(schema.description ?? '') ? Math.round(c.value * 1e6) / 1e8 : c.value;
}

const KIND_RANK: Record<Kind, number> = { quoted: 1, email: 1, url: 1, date: 1, ident: 0.9, name: 0.85, number: 0.7 };

/** A date the message gives in words (today, tomorrow, next Friday), as an ISO date. */
function spokenDate(message: string, now: Date): string | undefined {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const shift = (days: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days));
  if (/\btoday\b/i.test(message)) return day(shift(0));
  if (/\btomorrow\b/i.test(message)) return day(shift(1));
  if (/\byesterday\b/i.test(message)) return day(shift(-1));
  const weekday = /\b(next|this|on)?\s*(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i.exec(message);
  if (weekday) {
    const target = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'].indexOf(weekday[2]!.toLowerCase());
    let ahead = (target - now.getUTCDay() + 7) % 7 || 7;
    if (weekday[1]?.toLowerCase() === 'next' && ahead < 7 && now.getUTCDay() !== 0 && target <= now.getUTCDay()) ahead += 0;
    return day(shift(ahead));
  }
  return undefined;
}

const CURRENCY_AND_UNIT_SYNONYMS: Record<string, string[]> = {
  usd: ['dollar', 'dollars', '$'], eur: ['euro', 'euros', '€'], gbp: ['pound', 'pounds', 'sterling', '£'], jpy: ['yen'], cny: ['yuan', 'renminbi'], inr: ['rupee', 'rupees'],
  celsius: ['c', '°c', 'centigrade'], fahrenheit: ['f', '°f'], mid: ['medium', 'middle'], medium: ['mid', 'middle'], high: ['strong', 'max'], low: ['weak', 'min'],
};

/** How an enum value may be said: itself, and its synonyms (pounds for GBP, medium for MID). */
const formsOf = (value: unknown) => [String(value).toLowerCase(), ...(CURRENCY_AND_UNIT_SYNONYMS[String(value).toLowerCase()] ?? [])];

/** How many of a tool's enum values the message names (a message naming them is about the tool). */
export function enumMentions(tool: { parameters: Record<string, unknown> }, message: string): number {
  const said = new Set(tokenize(message).flatMap((t) => [t.text.toLowerCase(), t.stem]));
  let count = 0;
  for (const schema of Object.values((tool.parameters.properties ?? {}) as Record<string, PropertySchema>)) {
    for (const value of schema.enum ?? []) {
      const forms = formsOf(value).filter((f) => f.length > 1);
      if (forms.some((f) => said.has(f))) count++;
    }
  }
  return count;
}

/** The enum value the message names (by value, or its words), nearest this parameter's naming words. */
function enumValue(values: unknown[], tokens: Token[], cues: Map<string, number>, used: Set<number>, message: string): { value: unknown; at: number } | undefined {
  const found: Array<{ value: unknown; at: number; score: number }> = [];
  for (const value of values) {
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    const forms = formsOf(value);
    // A value in code form ("AIR_DRY") is said in words ("air dry").
    const spoken = String(value).replace(/[_-]+/g, ' ').toLowerCase();
    tokens.forEach((t, i) => {
      const lower = t.text.toLowerCase();
      // A longer value is named by its stem too ("completed" names complete).
      if (!forms.includes(lower) && !forms.includes(stem(lower)) && !forms.some((f) => f.length >= 5 && lower.startsWith(f.slice(0, f.length - 2)))) return;
      if (used.has(i)) return;
      found.push({ value, at: i, score: 0 });
    });
    // A multi-word value ("extra spicy", "AIR_DRY" as "air dry") named whole.
    if (spoken.includes(' ') && message.toLowerCase().includes(spoken)) {
      found.push({ value, at: tokenAt(tokens, message.toLowerCase().indexOf(spoken)), score: 0 });
    }
  }
  if (found.length === 0) return undefined;
  for (const f of found) f.score = nearness(tokens, cues, { kind: 'name', value: '', first: f.at, last: f.at }, message);
  // Nearest its own naming words; otherwise the first mention not yet taken.
  found.sort((a, b) => b.score - a.score || a.at - b.at);
  return found[0];
}

/** Whether two values are said one after the other as items of a list: joined by a comma, "and" or "or". */
function joined(a: Candidate, b: Candidate, tokens: Token[], message: string): boolean {
  // "[1, 2, 3] and [4, 5, 6]" are two lists: a bracket between two values parts them.
  if (/[\])([(]/.test(message.slice(tokens[a.last]!.at + tokens[a.last]!.text.length, tokens[b.first]!.at))) return false;
  const between = tokens.slice(a.last + 1, b.first).map((t) => t.text.toLowerCase());
  return (between.length === 1 && (between[0] === 'and' || between[0] === 'or')) || (between.length === 0 && message.slice(tokens[a.last]!.at, tokens[b.first]!.at).includes(','));
}

/** `c` and the values of its kind said together with it, in order. */
function runAround(c: Candidate, others: Candidate[], tokens: Token[], message: string): Candidate[] {
  const sorted = [...new Set([...others, c])].sort((a, b) => a.first - b.first);
  let at = sorted.indexOf(c);
  let from = at;
  while (from > 0 && joined(sorted[from - 1]!, sorted[from]!, tokens, message)) from--;
  while (at + 1 < sorted.length && joined(sorted[at]!, sorted[at + 1]!, tokens, message)) at++;
  return sorted.slice(from, at + 1);
}

/**
 * The arguments for `tool` from `message`: the filled ones, and the required ones it could not
 * find (by name). `now` reads dates said in words.
 */
export function fillArguments(tool: { name: string; description: string; parameters: Record<string, unknown> }, message: string, now: Date): { args: Record<string, unknown>; missing: string[] } {
  const properties = (tool.parameters.properties ?? {}) as Record<string, PropertySchema>;
  const required = new Set((tool.parameters.required ?? []) as string[]);
  const tokens = tokenize(message);
  const candidates = candidatesOf(message, tokens);
  const toolWords = new Set(nameWords(tool.name).map(stem));
  const args: Record<string, unknown> = {};
  const usedCandidates = new Set<Candidate>();
  const usedEnumTokens = new Set<number>();

  // Enums and booleans first: they are named by words, not by values' shapes.
  const rest: string[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    const cues = cuesOf(name, schema, toolWords);
    const type = typeOf(schema);
    const options = schema.enum ?? (type === 'string' ? describedOptions(schema.description) : undefined);
    if (options) {
      // Role words pick among several mentions: "from USD to EUR" (from → the first, to → the next).
      const found = enumValue(options, tokens, cues, usedEnumTokens, message);
      if (found) {
        args[name] = found.value;
        usedEnumTokens.add(found.at);
      }
      continue;
    }
    if (type === 'boolean') {
      const at = tokens.findIndex((t) => cues.get(t.stem) === 1);
      if (at >= 0) {
        const before = tokens.slice(Math.max(0, at - 3), at).map((t) => t.text.toLowerCase());
        args[name] = !before.some((w) => /^(no|not|without|don't|dont|never|disable|exclude|n't)$/.test(w));
      } else if (required.has(name) && /\b(true|yes)\b/i.test(message)) args[name] = true;
      else if (required.has(name)) {
        const documented = documentedDefault(schema, type);
        if (documented !== undefined) args[name] = documented;
      }
      continue;
    }
    // An object with properties of its own ("body": {mode, temperature…}): its properties read from the same message.
    if (type === 'object' && schema.properties && Object.keys(schema.properties).length > 0) {
      const inner = fillArguments({ name: tool.name, description: tool.description, parameters: schema }, message, now);
      if (Object.keys(inner.args).length > 0 && inner.missing.length === 0) args[name] = inner.args;
      continue;
    }
    rest.push(name);
  }

  // Free text: what follows a colon, or the word naming the parameter ("with content go to gym"); the values inside it are its own.
  for (const name of [...rest]) {
    const schema = properties[name]!;
    if (typeOf(schema) !== 'string' || !FREE_TEXT.test(name)) continue;
    // Quoted words are the text itself ("…: \"who is the current pm\"").
    const quoted = candidates.filter((c) => c.kind === 'quoted' && !usedCandidates.has(c) && String(c.value).includes(' '));
    if (quoted.length === 1) {
      args[name] = quoted[0]!.value;
      usedCandidates.add(quoted[0]!);
      rest.splice(rest.indexOf(name), 1);
      continue;
    }
    const cue = nameWords(name).join(' ');
    const m = /:\s*(.+?)\s*$/.exec(message) ?? new RegExp(`\\b${cue}s?\\b\\s*(?:-|:|of|is|to)?\\s*(.+?)\\s*$`, 'i').exec(message);
    if (!m || m[1]!.split(/\s+/).length < 2) continue;
    args[name] = m[1]!.replace(/^['"“]|['"”.?!]$/g, '');
    const from = tokenAt(tokens, m.index + m[0].length - m[1]!.length);
    for (const c of candidates) if (c.first >= from) usedCandidates.add(c);
    rest.splice(rest.indexOf(name), 1);
  }

  // The initial speed of something that starts "from rest" is 0 (and no number said is it).
  for (const name of [...rest]) {
    const schema = properties[name]!;
    const about = `${nameWords(name).join(' ')} ${schema.description ?? ''}`;
    if (['number', 'integer'].includes(typeOf(schema)) && /velocity|speed/i.test(about) && /initial|start/i.test(about) && /\b(from|at) rest\b|\bstationary\b|\bstandstill\b/i.test(message)) {
      args[name] = 0;
      rest.splice(rest.indexOf(name), 1);
    }
  }
  // A value among the examples a description gives ("e.g. vegetarian, vegan, gluten free") that the message says.
  for (const name of [...rest]) {
    const schema = properties[name]!;
    if (typeOf(schema) !== 'string') continue;
    // An example that is what another parameter is about ("Bot" where there is a botId: "my bot") names that thing, not this value.
    const others = new Set(Object.keys(properties).filter((n) => n !== name).flatMap((n) => nameWords(n).map(stem)));
    const said = describedExamples(schema.description).find((example) => !others.has(stem(example)) && new RegExp(`\\b${example.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(message));
    if (said) {
      args[name] = said;
      rest.splice(rest.indexOf(name), 1);
    }
  }

  // "between New York and Boston", "from Paris to Rome": the first is the origin's, the second the destination's.
  const single = rest.filter((n) => typeOf(properties[n]!) !== 'array');
  const origin = single.find((n) => ORIGIN.test(`${nameWords(n).join(' ')} ${properties[n]!.description ?? ''}`));
  const destination = single.find((n) => n !== origin && DESTINATION.test(`${nameWords(n).join(' ')} ${properties[n]!.description ?? ''}`));
  if (origin && destination) {
    for (const [a, b] of candidates.flatMap((a) => candidates.filter((b) => b.first > a.last).map((b) => [a, b] as const))) {
      const opener = tokens[a.first - 1]?.text.toLowerCase();
      const between = tokens.slice(a.last + 1, b.first).map((t) => t.text.toLowerCase()).join(' ');
      if (!((opener === 'between' && between === 'and') || (opener === 'from' && between === 'to'))) continue;
      if (usedCandidates.has(a) || usedCandidates.has(b) || !fitsParameter(origin, properties[origin]!, a, toolWords) || !fitsParameter(destination, properties[destination]!, b, toolWords)) continue;
      args[origin] = valueFor(properties[origin]!, a);
      args[destination] = valueFor(properties[destination]!, b);
      usedCandidates.add(a).add(b);
      rest.splice(rest.indexOf(origin), 1);
      rest.splice(rest.indexOf(destination), 1);
      break;
    }
  }

  // Every other parameter against every value the message holds: the best pairs first, each value once.
  const pairs: Array<{ name: string; c: Candidate; score: number }> = [];
  for (const name of rest) {
    const schema = properties[name]!;
    const type = typeOf(schema);
    const cues = cuesOf(name, schema, toolWords);
    for (const c of candidates) {
      if (!fitsParameter(name, schema, c, toolWords)) continue;
      const near = nearness(tokens, cues, c, message);
      // A list is better given by values said together than by one alone.
      const listed = type === 'array' && runAround(c, candidates.filter((o) => o.kind === c.kind), tokens, message).length >= 2 ? 0.5 : 0;
      pairs.push({ name, c, score: near * KIND_RANK[c.kind] + KIND_RANK[c.kind] * 0.01 + listed });
    }
  }
  pairs.sort((a, b) => b.score - a.score || a.c.first - b.c.first);
  const arrays = new Map<string, Candidate[]>();
  for (const { name, c, score } of pairs) {
    if (usedCandidates.has(c)) continue;
    const schema = properties[name]!;
    if (typeOf(schema) === 'array') {
      // A list: its best value, and those said together with it ("Paris and London", "bookA, bookB, bookC").
      if (arrays.has(name) || (score < 0.05 && !required.has(name))) continue;
      const run = runAround(c, candidates.filter((o) => !usedCandidates.has(o) && o.kind === c.kind), tokens, message);
      arrays.set(name, run);
      for (const o of run) usedCandidates.add(o);
      continue;
    }
    if (name in args) continue;
    // An optional parameter is filled only when the message names it near its value.
    if (!required.has(name) && score < 0.1) continue;
    args[name] = valueFor(schema, c);
    usedCandidates.add(c);
  }
  // A list given by one identifier (a variable's name: `myItemList`) is passed as that name.
  const variable = (c: Candidate) => c.kind === 'ident' || (c.kind === 'quoted' && /^[A-Za-z_$][\w$]*$/.test(String(c.value)) && /[a-z][A-Z]/.test(String(c.value)));
  for (const [name, items] of arrays) args[name] = items.length === 1 && variable(items[0]!) ? items[0]!.value : items.sort((a, b) => a.first - b.first).map((c) => c.value);

  for (const name of rest) {
    if (name in args) continue;
    const schema = properties[name]!;
    const type = typeOf(schema);
    const date = schema.format === 'date' || schema.format === 'date-time' ? spokenDate(message, now) : undefined;
    if (date) {
      args[name] = date;
      continue;
    }
    // A kind of the thing the tool is about ("recipe_type" in "a vegan soup recipe"): the word said before the thing.
    const kindOf = /^(.+?)[ ](type|kind|category)$/.exec(nameWords(name).join(' '));
    if (type === 'string' && kindOf) {
      const at = tokens.findIndex((t) => t.stem === stem(kindOf[1]!.split(' ').pop()!));
      const before = at > 0 ? tokens[at - 1]! : undefined;
      if (before && /^[a-z]{3,}$/.test(before.text) && !STOP.has(before.text) && !COMMON.has(before.text) && !Object.values(args).includes(before.text)) {
        args[name] = before.text;
        continue;
      }
    }
    // What something is about ("news about climate change"), for a parameter that is a topic.
    if (type === 'string' && /^(topic|subject|keywords?|theme|term|about)$/i.test(nameWords(name).join('_'))) {
      const m = /\b(?:about|on|regarding|concerning)\s+([^,.;?!]{3,60})/i.exec(message);
      if (m) {
        args[name] = m[1]!.trim();
        continue;
      }
    }
    // A required parameter the message does not give takes the default the tool documents ("Default is true.").
    const documented = required.has(name) ? documentedDefault(schema, type) : undefined;
    if (documented !== undefined) {
      args[name] = documented;
      continue;
    }
    // A place said in lowercase after in/at/to/from ("in tokyo"), for a parameter about places.
    if (type === 'string' && PLACE.test(`${nameWords(name).join(' ')} ${schema.description ?? ''}`)) {
      const m = /\b(?:in|at|to|from|for|near)\s+([a-z][a-z-]{2,})\b/.exec(message);
      // Not a verb after "to" ("I need to add…"): the common words are no places.
      if (m && !STOP.has(m[1]!) && !COMMON.has(m[1]!) && !toolWords.has(stem(m[1]!))) {
        args[name] = m[1]!.replace(/\b\w/g, (ch) => ch.toUpperCase());
        continue;
      }
    }
  }
  const missing = [...required].filter((name) => !(name in args) && name in properties);
  return { args, missing };
}

/**
 * The values a message lists for one parameter ("weather in Paris and London"): names or quoted
 * values of its type said one after another, joined by commas, "and" or "or". Two or more: the tool
 * is called once for each.
 */
export function listedValues(tool: { name: string; parameters: Record<string, unknown> }, name: string, message: string): string[] {
  const schema = ((tool.parameters.properties ?? {}) as Record<string, PropertySchema>)[name];
  if (!schema || typeOf(schema) !== 'string' || schema.enum) return [];
  const tokens = tokenize(message);
  const toolWords = new Set(nameWords(tool.name).map(stem));
  const fitting = candidatesOf(message, tokens)
    .filter((c) => (c.kind === 'name' || c.kind === 'quoted') && fitsString(name, schema, c, toolWords))
    .sort((a, b) => a.first - b.first);
  let run: Candidate[] = [];
  for (const c of fitting) {
    const previous = run[run.length - 1];
    if (previous && joined(previous, c, tokens, message)) run.push(c);
    else if (run.length < 2) run = [c];
  }
  return run.length >= 2 ? run.map((c) => String(c.value)) : [];
}
