import { createHmac, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../errors';

/**
 * Opaque pagination cursors: the last sort key read, with an HMAC that binds it to the partition it
 * was read from (which starts with the tenant scope). A cursor someone made up, edited, or took from
 * another tenant or another list is a 400 before any read; the partition itself always comes from
 * the caller's scope, so even a valid cursor cannot lead anywhere else.
 */
export interface CursorCodec {
  encode(pk: string, lastKey: Record<string, unknown> | undefined): string | null;
  /** The sort key to continue after, or undefined without a cursor; a cursor that fails is a 400. */
  decode(pk: string, cursor: string | undefined): string | undefined;
}

const MAX_SORT_KEY = 1024;
const invalid = () => new ValidationError('cursor', 'is not a cursor returned by this API for this list');

export function cursorCodec(key: string | undefined): CursorCodec {
  const mac = (pk: string, sk: string) => {
    if (!key) throw new Error('No cursor signing key: set CURSOR_SIGNING_KEY');
    return createHmac('sha256', key).update(`${pk}\u0000${sk}`).digest().subarray(0, 16);
  };
  return {
    encode(pk, lastKey) {
      if (!lastKey || typeof lastKey.sk !== 'string') return null;
      return `${Buffer.from(lastKey.sk, 'utf8').toString('base64url')}.${mac(pk, lastKey.sk).toString('base64url')}`;
    },
    decode(pk, cursor) {
      if (cursor === undefined) return undefined;
      const [body, signature, extra] = cursor.split('.');
      if (!body || !signature || extra !== undefined) throw invalid();
      const sk = Buffer.from(body, 'base64url').toString('utf8');
      const given = Buffer.from(signature, 'base64url');
      if (sk.length === 0 || sk.length > MAX_SORT_KEY) throw invalid();
      const expected = mac(pk, sk);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      return sk;
    },
  };
}
