import { z } from 'zod';
import { AppError } from '../errors';
import { log } from '../log';

/**
 * Items as the store reads them back. Each stored entity declares its item's shape once, as a zod
 * schema beside its store, and every read parses through it: callers get checked, typed values,
 * and an item without that shape fails here, loudly, not later somewhere that trusted a cast.
 * Shapes are structural (types, not the API's limits: an item written under older limits still
 * reads). Keys (`pk`, `sk`) and attributes only the table uses (`expiresAt`) are not part of a
 * shape, so parsing leaves them out. Shapes are declared `z.lazy`: built at their first read, not
 * at every cold start, where building the stores' four hundred schemas was a tenth of the start.
 */
export function readItem<S extends z.ZodType>(shape: S, item: Record<string, unknown>, what: string): z.output<S> {
  const parsed = shape.safeParse(item);
  if (parsed.success) return parsed.data;
  log.error('stored item does not have its shape', { what, pk: item.pk, sk: item.sk, issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) });
  throw new AppError('INTERNAL_ERROR', `A stored ${what} could not be read`);
}

/** Reads each of a query's items. */
export const readItems = <S extends z.ZodType>(shape: S, items: Array<Record<string, unknown>> | undefined, what: string): Array<z.output<S>> => (items ?? []).map((item) => readItem(shape, item, what));

/** An object whose fields are its owner's own (a sealed secret, which only `secrets/` opens): kept as stored. */
export const anObject = z.custom<object>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { message: 'must be an object' });
