import { ValidationError } from '../errors';

/**
 * Opaque pagination cursors: base64url of the last sort key. The partition always comes from the
 * caller's tenant scope, so a cursor can never lead into another tenant's data.
 */
export function encodeCursor(lastKey: Record<string, unknown> | undefined): string | null {
  if (!lastKey || typeof lastKey.sk !== 'string') return null;
  return Buffer.from(JSON.stringify({ sk: lastKey.sk }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (parsed && typeof parsed === 'object' && typeof (parsed as { sk?: unknown }).sk === 'string') {
      return (parsed as { sk: string }).sk;
    }
  } catch {
    // fall through: any undecodable cursor is the client's error
  }
  throw new ValidationError('cursor', 'is not a cursor returned by this API');
}
