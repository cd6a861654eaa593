import type { MiddlewareHandler } from 'hono';
import { newId } from '../../ids';
import { log } from '../../log';
import { withRequestMetrics } from '../../store/request-metrics';
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
    const { result, counters } = withRequestMetrics(() => next());
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
