import type { MiddlewareHandler } from 'hono';
import { newId } from '../../ids';
import { log } from '../../log';
import { withRequestMetrics } from '../../store/request-metrics';
import { inSpan, SpanKind } from '../../telemetry';
import type { AppEnv } from '../context';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * First middleware: a request id (the caller's `X-Request-Id` when it is sane, so traces join up),
 * the response header, and one access-log line with status, duration and DynamoDB requests made.
 */
export function requestContext(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id');
    const requestId = given && CLIENT_REQUEST_ID.test(given) ? given : newId('request');
    c.set('requestId', requestId);
    const started = performance.now();
    const { result, counters } = withRequestMetrics(() =>
      // The request's span is the root of its trace: the model, tool, search and queued work below it are its children.
      inSpan(`${c.req.method} ${c.req.path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path, 'cairn.request.id': requestId } }, async (span) => {
        await next();
        const route = [...c.req.matchedRoutes].reverse().find((r) => r.method !== 'ALL' && !r.path.endsWith('*'))?.path;
        if (route) span.updateName(`${c.req.method} ${route}`);
        const tenantId = (c.get('identity') ?? c.get('platformToken'))?.scope.tenantId;
        span.setAttributes({ 'http.response.status_code': c.res.status, ...(route ? { 'http.route': route } : {}), ...(tenantId ? { 'cairn.tenant.id': tenantId } : {}) });
      }),
    );
    await result;
    c.header('X-Request-Id', requestId);
    log.info('request', {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      dynamoRequests: counters.dynamoRequests,
      capacityUnits: Math.round(counters.capacityUnits * 10) / 10,
      tenantId: (c.get('identity') ?? c.get('platformToken'))?.scope.tenantId,
    });
  };
}
