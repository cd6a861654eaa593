/**
 * The closed catalogue of errors. Handlers and domain code throw these; one onError maps them to
 * the error body. Anything else becomes a 500 that leaks nothing. Each error also says whether
 * retrying can help: one rule (`isRetryable`) decides retries for ingestion, workflow steps and
 * every later consumer.
 */
export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'UPSTREAM_ERROR'
  | 'SERVICE_UNAVAILABLE';

const statusOf: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
};

export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly statusCode: number;
  /** Whether the same request may succeed later; by default the server-side (5xx) failures. */
  readonly retryable: boolean;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(message, options);
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

export class NotFoundError extends AppError {
  constructor(resource: string, id: string) {
    super('NOT_FOUND', `${resource} ${id} not found`, { resource, id });
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
