/**
 * A request path as logs, traces and error details record it: a path segment that is a secret (an
 * inbound hook's token, `chs_…`, which authenticates by being in the URL) is replaced, so what
 * reads logs and traces (`GET /v1/traces/{id}` included) cannot call the hook.
 */
export const recordedPath = (path: string): string => path.replace(/\/chs_[^/]*/g, '/chs_[redacted]');
