import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NotFoundError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { ok } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { Runtime } from '../../shared/runtime';

const span = z.object({
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string().openapi({ example: 'chat extractive' }),
  startTime: z.string(),
  durationMs: z.number(),
  status: z.enum(['ok', 'error']),
  attributes: z.record(z.string(), z.unknown()).openapi({ description: 'OpenTelemetry attributes (gen_ai.*, http.*, cairn.*)' }),
  events: z.array(z.object({ name: z.string(), attributes: z.record(z.string(), z.unknown()) })).optional().openapi({ description: 'Span events (cairn.guardrail: what an agent’s guardrails found)' }),
});
const traceView = z.object({ traceId: z.string(), spans: z.array(span) }).openapi('Trace');

/**
 * `GET /v1/traces/{requestId}`: the trace a request began (the `X-Request-Id` of any response),
 * from the traces this process keeps — local mode; in AWS traces go to X-Ray or the OTLP backend.
 */
export function registerTraces(app: OpenAPIHono<AppEnv>, rt: Runtime) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/traces/{requestId}',
      operationId: 'getTrace',
      tags: ['Traces'],
      summary: 'The trace of a request: its spans (API, model calls, tools, searches, queued workflow steps and ingestion)',
      description: 'Served where the process keeps recent traces (local mode). In AWS, traces are exported to X-Ray or an OTLP endpoint (the CDK `tracing` context flag) and this answers 404.',
      security: [{ ApiKeyAuth: [] }],
      request: { params: z.object({ requestId: z.string().min(1).max(128) }) },
      responses: { 200: jsonContent(envelope(traceView), 'The trace, spans in start order'), ...commonErrors },
    }),
    (c) => {
      const { requestId } = c.req.valid('param');
      const found = rt.traces?.byRequestId(requestId);
      // Another tenant's trace is as absent as one never kept.
      if (!found || found.tenantId !== c.get('identity').scope.tenantId) throw new NotFoundError('trace', requestId);
      return ok(c, { traceId: found.traceId, spans: found.spans });
    },
  );
}
