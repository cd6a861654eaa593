import type { MiddlewareHandler } from 'hono';
import { newId } from '../../ids';
import { log, withLogContext } from '../../log';
import { emitMetrics } from '../../metrics';
import { withDynamoCounters } from '../../store/request-metrics';
import { inSpan, SpanKind } from '../../telemetry';
import type { AppEnv } from '../context';
import type { Clock } from '../../clock';
import { recordedPath } from '../recorded-path';
import { matchedRoute } from '../matched-route';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** What Hono's Lambda adapter passes as the environment (absent locally). */
type LambdaEnv = { lambdaContext?: { awsRequestId?: string } } | undefined;

/**
 * First middleware: a request id (the caller's `X-Request-Id` when it is sane, so traces join up),
 * the response header, the request's span, its log context (request id; the tenant once
 * authentication knows it; Lambda's own request id), one access-log line with status, duration and
 * DynamoDB work, and its metrics by route (requests, 4xx, 5xx, latency).
 */
export function requestContext(clock: Clock): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('clock', clock);
    const given = c.req.header('x-request-id');
    const requestId = given && CLIENT_REQUEST_ID.test(given) ? given : newId('request', clock.now());
    c.set('requestId', requestId);
    // Set before the route, it is part of the response the route builds. Hono rebuilds a finished
    // response for each header set on it (on the Node server, from a string body into a web stream).
    c.header('X-Request-Id', requestId);
    const lambdaRequestId = (c.env as LambdaEnv)?.lambdaContext?.awsRequestId;
    const started = performance.now();
    let route: string | undefined;
    const path = recordedPath(c.req.path);
    await withLogContext({ requestId, ...(lambdaRequestId ? { lambdaRequestId } : {}) }, async () => {
      const { result, counters } = withDynamoCounters(() =>
        // The request's span is the root of its trace: the model, tool, search and queued work below it are its children.
        inSpan(`${c.req.method} ${path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'url.path': path, 'cairn.request.id': requestId } }, async (span) => {
          await next();
          route = matchedRoute(c);
          if (route) span.updateName(`${c.req.method} ${route}`);
          const tenantId = (c.get('identity') ?? c.get('platformToken'))?.scope.tenantId;
          span.setAttributes({ 'http.response.status_code': c.res.status, ...(route ? { 'http.route': route } : {}), ...(tenantId ? { 'cairn.tenant.id': tenantId } : {}) });
        }),
      );
      await result;
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      log.info('request', {
        method: c.req.method,
        path,
        status: c.res.status,
        durationMs,
        dynamoRequests: counters.dynamoRequests,
        capacityUnits: Math.round(counters.capacityUnits * 10) / 10,
      });
      const status = c.res.status;
      emitMetrics(
        { route: `${c.req.method} ${route ?? '(unmatched)'}` },
        { Requests: { value: 1, unit: 'count' }, ClientErrors: { value: status >= 400 && status < 500 ? 1 : 0, unit: 'count' }, ServerErrors: { value: status >= 500 ? 1 : 0, unit: 'count' }, Latency: { value: durationMs, unit: 'ms' } },
      );
    });
    // A response made without the context (a raw `Response`, an HTTPException's own) lacks it.
    if (!c.res.headers.has('X-Request-Id')) c.header('X-Request-Id', requestId);
  };
}
