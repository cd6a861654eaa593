/**
 * The closed catalogue of errors. Handlers and domain code throw these; one onError maps them to
 * the error body. Anything else becomes a 500 that leaks nothing. Each error also says whether
 * retrying can help: one rule (`isRetryable`) decides retries for ingestion, workflow steps and
 * every later consumer.
 */
export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'UNAUTHORIZED'
  // An end user's token (X-End-User-Token) failed verification: `details.reason` says why.
  | 'END_USER_TOKEN_INVALID'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'UPSTREAM_ERROR'
  | 'SERVICE_UNAVAILABLE'
  // Why one file could not be read: reported on the file (`files[].error`); the rest of a sync goes on.
  | DocumentErrorCode;

export type DocumentErrorCode = 'UNREADABLE_DOCUMENT' | 'ENCRYPTED_DOCUMENT' | 'NO_TEXT' | 'DOCUMENT_TOO_LARGE' | 'PARSE_TIMEOUT' | 'UNSUPPORTED_FORMAT';

const statusOf: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  END_USER_TOKEN_INVALID: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  UNREADABLE_DOCUMENT: 422,
  ENCRYPTED_DOCUMENT: 422,
  NO_TEXT: 422,
  DOCUMENT_TOO_LARGE: 413,
  PARSE_TIMEOUT: 422,
  UNSUPPORTED_FORMAT: 415,
};

export type ErrorDetails = Record<string, unknown>;

/** Characters of a rejected value an error quotes: a megabyte sent is not a megabyte answered. */
export const QUOTED_CHARS = 100;

/** A value as an error quotes it: whole when short, else its start and its length. */
export const quote = (value: string, max = QUOTED_CHARS) => (value.length <= max ? value : `${value.slice(0, max)}… (${value.length} characters)`);

/** An error's own text, whatever it quotes, stays this short (a backstop for quotes not cut where they are made). */
const MAX_ERROR_TEXT = 1000;

function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return quote(value, MAX_ERROR_TEXT);
  if (depth > 3 || !value || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => bounded(v, depth + 1));
  return Object.fromEntries(Object.entries(value).slice(0, 50).map(([k, v]) => [quote(k), bounded(v, depth + 1)]));
}

export class AppError extends Error {
  readonly statusCode: number;
  /** Whether the same request may succeed later; by default the server-side (5xx) failures. */
  readonly retryable: boolean;
  readonly details?: ErrorDetails;
  constructor(
    readonly code: ErrorCode,
    message: string,
    details?: ErrorDetails,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(quote(message, MAX_ERROR_TEXT), options);
    if (details) this.details = bounded(details) as ErrorDetails;
    this.name = 'AppError';
    this.statusCode = statusOf[code];
    this.retryable = options?.retryable ?? this.statusCode >= 500;
  }
}

/**
 * Whether retrying can help: an AppError says so itself; anything else is unexpected (a bug, an
 * untranslated SDK or network failure) and gets the benefit of the doubt.
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof AppError ? error.retryable : true;
}

/** A request field that failed validation: `details.field` names it, `details.reason` says why. */
export class ValidationError extends AppError {
  constructor(field: string, reason: string, extra?: ErrorDetails) {
    super('INVALID_REQUEST', `${field} ${reason}`, { field, reason, ...extra });
  }
}

/** Why an end user's token was refused; the message says it in words. */
export type EndUserTokenReason = 'malformed' | 'signature' | 'expired' | 'no_expiry' | 'lifetime' | 'not_yet_valid' | 'issuer' | 'audience' | 'user_claim' | 'groups_claim' | 'not_configured' | 'required' | 'user_mismatch';

/** An end user's token that Cairn cannot accept (401): `details.reason` is machine-readable. */
export class EndUserTokenError extends AppError {
  constructor(readonly reason: EndUserTokenReason, message: string) {
    super('END_USER_TOKEN_INVALID', message, { reason });
  }
}

export class NotFoundError extends AppError {
  constructor(resource: string, id: string) {
    super('NOT_FOUND', `${resource} ${quote(id)} not found`, { resource, id: quote(id) });
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details?: ErrorDetails) {
    super('CONFLICT', message, details);
  }
}

export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number, details: ErrorDetails) {
    super('RATE_LIMITED', `Rate limit exceeded; retry in ${retryAfterSeconds} s`, details, { retryable: true });
  }
}

/** A well-kept dependency (model provider, database, tool, website) failed; `retryable` when it may answer next time. */
export class UpstreamError extends AppError {
  constructor(message: string, details: ErrorDetails, options: { retryable: boolean; cause?: unknown }) {
    super('UPSTREAM_ERROR', message, details, options);
  }
}

/** The store could not be reached (throttled, down, network): the request was fine, retry shortly. */
export class UnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SERVICE_UNAVAILABLE', message, undefined, { ...options, retryable: true });
  }
}

/**
 * A file that cannot be read, and why (`code`): reported on the file, never retried (the same
 * bytes fail the same way).
 */
export class DocumentError extends AppError {
  declare readonly code: DocumentErrorCode;
  constructor(code: DocumentErrorCode, message: string) {
    super(code, message, undefined, { retryable: false });
    this.name = 'DocumentError';
  }
}

/** An object larger than its reader takes (a file of an `s3` source, an upload): never retried. */
export class BlobTooLargeError extends AppError {
  constructor(
    readonly key: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super('PAYLOAD_TOO_LARGE', `${key} has ${size} bytes, more than ${limit}`, { key, size, limit }, { retryable: false });
  }
}

/**
 * A tool call that failed (bad arguments, an error answer, a failed workflow). An agent's model is
 * told and the turn goes on; a workflow `tool` step fails, and is retried when `retryable` (by
 * default: an answer may differ next time; arguments the tool refused, or a 4xx, will not).
 */
export class ToolFailure extends AppError {
  constructor(message: string, options: { invalidArguments?: boolean; retryable?: boolean } = {}) {
    super(options.invalidArguments ? 'INVALID_REQUEST' : 'UPSTREAM_ERROR', message, undefined, { retryable: !options.invalidArguments && (options.retryable ?? true) });
  }
}

/**
 * A problem with an OpenAPI document a tool names, and the tool's field it comes from
 * (`document.paths`, `operations[1]`); the tool's prepare step names it under the tool's path.
 */
export class OpenApiProblem extends AppError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('INVALID_REQUEST', message, { field }, { retryable: false });
  }
}
