import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError } from '../../errors';
import { assertStorableJson } from '../../json-guard';
import type { AppEnv } from '../context';

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;
const MULTIPART_TYPE = /^multipart\/form-data\s*;/i;
const JSON_LINES_TYPE = /^application\/(x-ndjson|jsonl|x-jsonlines)\s*(;|$)/i;

/** Whether a content type is JSON Lines (on the paths that take them, the route reads the body itself). */
export const isJsonLines = (type: string | undefined) => JSON_LINES_TYPE.test(type ?? '');

function hasBody(headers: Headers): boolean {
  const length = headers.get('content-length');
  if (length !== null) return Number(length) > 0;
  return headers.has('transfer-encoding');
}

/**
 * A request body must be JSON (else 415), no larger than `maxBytes` (else 413), parse (else 400)
 * and be storable as sent (else 400 naming the field: see `json-guard.ts`). Requests without a
 * body pass: their handlers then report the missing fields. On `multipartPaths`, a
 * multipart/form-data body, and on `jsonLinesPaths` a JSON Lines one (application/x-ndjson), is
 * held to the same size and left to the route to read (and each line to the same rules); so is a
 * JSON body on `jsonRpcPaths`, whose route answers a parse error in JSON-RPC's shape.
 */
export function bodyGuard(maxBytes: number, options: { multipartPaths?: RegExp; jsonLinesPaths?: RegExp; jsonRpcPaths?: RegExp } = {}): MiddlewareHandler<AppEnv> {
  const tooLarge = (c: Context<AppEnv>): never => {
    // The body is refused unread: a kept-alive client must not send its next request after it.
    c.header('Connection', 'close');
    throw new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`, { limitBytes: maxBytes });
  };
  const counted: MiddlewareHandler<AppEnv> = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  // A declared length is checked as it stands: Hono's bodyLimit, needed to count a chunked body as
  // it is read, first opens the request's body as a web stream, which the Node server's direct read
  // of a JSON body then cannot use (a tenth of a search request's CPU).
  const limit: MiddlewareHandler<AppEnv> = async (c, next) => {
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) return counted(c, next);
    if (Number(length) > maxBytes) tooLarge(c);
    await next();
  };
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'DELETE') return next();
    if (!hasBody(c.req.raw.headers)) return next();
    const type = c.req.header('content-type') ?? '';
    const multipart = options.multipartPaths?.test(c.req.path) ?? false;
    if (multipart && MULTIPART_TYPE.test(type)) return limit(c, next);
    const jsonLines = options.jsonLinesPaths?.test(c.req.path) ?? false;
    if (jsonLines && isJsonLines(type)) return limit(c, next);
    if (!JSON_TYPE.test(type)) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Request body must be application/json${multipart ? ' or multipart/form-data' : ''}${jsonLines ? ' or application/x-ndjson' : ''}`, {
        contentType: type || null,
      });
    }
    // A JSON-RPC endpoint answers a body that does not parse in its protocol's words (-32700).
    if (options.jsonRpcPaths?.test(c.req.path)) return limit(c, next);
    return limit(c, async () => {
      await assertStorableBody(c);
      await next();
    });
  };
}

/**
 * Parses the body once (Hono keeps it for the route's validator) and holds it to the one rule for
 * JSON from outside: depth, number range, reserved key names.
 */
async function assertStorableBody(c: Context<AppEnv>): Promise<void> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch (error) {
    if (error instanceof AppError) throw error; // the size limit, while reading
    throw new AppError('INVALID_REQUEST', 'Request body is not valid JSON', { field: 'body', reason: 'is not valid JSON' });
  }
  assertStorableJson(body);
}
