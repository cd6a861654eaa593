import { z } from '@hono/zod-openapi';
import type { READ_ONLY_FIELDS } from './read-only';
import { isKnownProvider, isModelNameShaped, MODEL_NAME_REASON, unknownProviderReason } from './models/model-name';

/** A number in [min, max] that says so when it is not. */
export function between(min: number, max: number) {
  const error = `must be between ${min} and ${max}`;
  return z.number().min(min, { error }).max(max, { error });
}

export function integerBetween(min: number, max: number) {
  const error = `must be an integer between ${min} and ${max}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
}

export const modelName = z
  .string()
  .min(1)
  .max(200)
  .refine(isModelNameShaped, { error: MODEL_NAME_REASON })
  .refine(isKnownProvider, { error: (issue) => unknownProviderReason(String(issue.input)) })
  .openapi({ example: 'gpt-4', description: '`provider/model` (local, bedrock, openai, anthropic, or a provider MODEL_PROVIDERS names) or a bare name' });

/**
 * Models tried in order when the one before fails with a 429, a 5xx, a time-out or a lost
 * connection (never on another 4xx); `local/extractive` may end the chain.
 */
export const fallbackModels = z
  .array(modelName)
  .max(5)
  .superRefine(uniqueItems((m) => m, 'model'))
  .openapi({ example: ['anthropic/claude-3-5-haiku-latest', 'local/extractive'], description: 'Tried in order when the model before fails with a 429, a 5xx, a time-out or a lost connection (never on another 4xx); `local/extractive` may end the chain' });

/**
 * Server-owned fields: accepted so a client can send back what it read, then ignored. Every
 * other unknown field is a 400 that names it.
 */
/**
 * A URL Cairn will call: http or https, and no user name or password in it (a URL's credentials
 * would be sent as Basic auth and shown back wherever the URL is: tools, steps and webhooks have
 * `auth` settings for them, stored sealed).
 */
export const httpUrl = (maxLength = 2048) =>
  z
    .string()
    .max(maxLength)
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), { error: 'must be an http or https URL' })
    .refine((value) => !URL.canParse(value) || (new URL(value).username === '' && new URL(value).password === ''), { error: 'must not carry a user name or password (user:password@): use the auth settings' });

const readOnly = z.unknown().optional().openapi({ description: 'read-only; ignored' });
export const readOnlyFields = { id: readOnly, createdAt: readOnly, updatedAt: readOnly, status: readOnly, version: readOnly } satisfies Record<(typeof READ_ONLY_FIELDS)[number], z.ZodType>;

/** Fields every stored record carries. */
export const recordFields = {
  id: z.string(),
  createdAt: z.string().openapi({ example: '2026-11-21T10:00:00.000Z' }),
  updatedAt: z.string(),
  version: z.int().openapi({ description: 'Increments on every change' }),
};

/** Marks list items that repeat an earlier one. */
export function uniqueItems<T>(key: (item: T) => unknown, what: string, field?: string) {
  return (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Map<unknown, number>();
    items.forEach((item, index) => {
      const k = key(item);
      const first = seen.get(k);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: field ? [index, field] : [index],
          message: `repeats the ${what} at index ${first}`,
        });
      } else seen.set(k, index);
    });
  };
}

/** Refuses a JSON Schema zod cannot turn into a check: values against it could not be checked. */
export const checkable =
  (what: string) =>
  (schema: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    try {
      z.fromJSONSchema(schema);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not a JSON Schema this server can check ${what} with: ${(error as Error).message}` });
    }
  };

type Shown<F extends Record<string, z.ZodType>> = { [K in keyof F]: F[K] extends z.ZodDefault<infer T> ? T : F[K] };

/**
 * Input fields as a response shows them: a field with a default is always there once stored, so the
 * response schema (and the clients generated from it) must not call it optional.
 */
export function shownFields<F extends Record<string, z.ZodType>>(fields: F): Shown<F> {
  return Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, schema instanceof z.ZodDefault ? schema.unwrap() : schema])) as Shown<F>;
}
