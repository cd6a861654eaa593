import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AppError } from '../errors';
import { errorFields, log } from '../log';
import { clockOf, type AppEnv } from './context';
import { errorBody } from './envelope';
import { recordedPath } from './recorded-path';

function fromHttpException(error: HTTPException): AppError {
  // Hono's JSON validator throws 400 on a body it cannot parse.
  if (error.status === 400) return new AppError('INVALID_REQUEST', 'Request body is not valid JSON', { field: 'body', reason: 'is not valid JSON' });
  if (error.status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large');
  if (error.status === 401) return new AppError('UNAUTHORIZED', 'Unauthorized');
  return new AppError('INVALID_REQUEST', error.message || 'Bad request');
}

/** The one place errors become responses. Anything unexpected is a 500 that leaks nothing. */
export const errorHandler: ErrorHandler<AppEnv> = (error, c) => {
  let appError: AppError;
  if (error instanceof AppError) appError = error;
  else if (error instanceof HTTPException) appError = fromHttpException(error);
  else {
    log.error('unhandled error', { requestId: c.get('requestId'), path: recordedPath(c.req.path), ...errorFields(error) });
    appError = new AppError('INTERNAL_ERROR', 'Internal error; quote the requestId when reporting it');
  }
  if (appError.code === 'SERVICE_UNAVAILABLE') c.header('Retry-After', '1');
  // A spent token budget comes back when the month turns.
  const resetAt = appError.code === 'QUOTA_EXCEEDED' ? Date.parse(String(appError.details?.resetAt)) : NaN;
  if (Number.isFinite(resetAt)) c.header('Retry-After', String(Math.max(1, Math.ceil((resetAt - clockOf(c).now()) / 1000))));
  if (appError.statusCode >= 500 && error instanceof AppError) {
    log.error('request failed', { requestId: c.get('requestId'), code: appError.code, ...errorFields(error.cause ?? error) });
  }
  const body = c.get('errorStyle') === 'openai' ? openAiErrorBody(appError) : errorBody(c, appError);
  return c.json(body, appError.statusCode as ContentfulStatusCode);
};

/** The OpenAI-compatible routes: they (and any path below them) answer errors in OpenAI's shape. */
export const OPENAI_PATHS = ['/v1/chat/completions', '/v1/models', '/v1/responses'] as const;

export function isOpenAiPath(path: string): boolean {
  return OPENAI_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * OpenAI's error body, `{error: {message, type, param, code}}`, for the OpenAI-compatible routes:
 * its clients read `param` and `code` (the `openai` client raises BadRequestError, NotFoundError…).
 */
export function openAiErrorBody(error: AppError) {
  const status = error.statusCode;
  const type =
    status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  const details = error.details ?? {};
  const code =
    status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : status === 404 && details.resource === 'agent' ? 'model_not_found' : error.code.toLowerCase();
  return { error: { message: error.message, type, param: typeof details.field === 'string' ? details.field : null, code } };
}

export function notFoundResponse(c: Context<AppEnv>) {
  const error = new AppError('NOT_FOUND', `No route for ${c.req.method} ${recordedPath(c.req.path)}`, {
    method: c.req.method,
    path: recordedPath(c.req.path),
  });
  return c.json(c.get('errorStyle') === 'openai' ? openAiErrorBody(error) : errorBody(c, error), 404);
}
