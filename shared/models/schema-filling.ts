/**
 * How the built-in engine fills a JSON Schema's properties from what it has (the question and its
 * own answer): the structured replies of `response_format` and the arguments of a call it was told
 * to make. Where a value can be read it is; a forced call's required argument that cannot takes a
 * value of its type, so the call still matches the schema its caller parses it with.
 */
export interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  format?: string;
  properties?: Record<string, PropertySchema>;
  required?: string[];
  items?: PropertySchema;
}

const ANSWER_NAMES = /^(answer|reply|response|text|summary|content|message|result)$/i;

/** The first of a schema's enum values the text names as a word (any case). */
export function mentionedValue(values: unknown[], text: string): unknown {
  return values.find((v) => typeof v === 'string' && new RegExp(`\\b${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(text));
}

/** A property's one type (the first that is not null, of a list). */
export const typeOf = (property: PropertySchema): string | undefined => (Array.isArray(property.type) ? (property.type.find((t) => t !== 'null') ?? property.type[0]) : property.type);

/**
 * A property's value read from the answer (and the question, for an enum): answer-like strings
 * take the answer, enums a value named, numbers the answer's first number, booleans a yes or no;
 * undefined where the answer does not give one.
 */
export function valueFromAnswer(name: string, property: PropertySchema, haystack: string, answer: string): unknown {
  const type = typeOf(property);
  if (property.enum) return mentionedValue(property.enum, haystack);
  if ((type === 'string' || type === undefined) && ANSWER_NAMES.test(name)) return answer;
  if (type === 'number' || type === 'integer') {
    const number = /-?\d+(?:\.\d+)?/.exec(answer)?.[0];
    return number === undefined ? undefined : type === 'integer' ? Math.round(Number(number)) : Number(number);
  }
  if (type === 'boolean') return /^\s*(yes|yeah|correct|true)\b/i.test(answer) ? true : /^\s*(no|not|false)\b/i.test(answer) ? false : undefined;
  if (type === 'array' && ANSWER_NAMES.test(name.replace(/s$/, ''))) return answer.split(/(?<=[.!?])\s+/).filter(Boolean);
  return undefined;
}

/**
 * A value of the property's type for a call that must be made: read from the answer where it
 * can be, else the question itself for a string, the question's first number (or the minimum, or
 * 0), the first enum value, false, an empty list, an object with its own required properties filled.
 */
export function typedValue(name: string, property: PropertySchema, said: { question: string; answer: string; now: Date }, depth = 0): unknown {
  const haystack = `${said.question}\n${said.answer}`;
  if (property.const !== undefined) return property.const;
  const read = valueFromAnswer(name, property, haystack, said.answer);
  if (read !== undefined) return read;
  if (property.default !== undefined) return property.default;
  if (property.enum) return property.enum[0];
  switch (typeOf(property)) {
    case 'number':
    case 'integer': {
      const number = /-?\d+(?:\.\d+)?/.exec(said.question)?.[0];
      const value = number !== undefined ? Number(number) : (property.minimum ?? 0);
      return typeOf(property) === 'integer' ? Math.round(value) : value;
    }
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'null':
      return null;
    case 'object': {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      for (const required of property.required ?? []) {
        const inner = property.properties?.[required];
        if (inner) out[required] = typedValue(required, inner, said, depth + 1);
      }
      return out;
    }
    default:
      return property.format === 'date' ? said.now.toISOString().slice(0, 10) : said.question;
  }
}
