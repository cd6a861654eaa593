import { SCOPE_HEADERS } from './middleware/platform-auth';

/**
 * What the route schemas cannot say because middleware does it, added to a generated OpenAPI
 * document in one place: the response headers every response carries (request id, rate limits,
 * Retry-After), the platform's scope headers, and the servers a client may call.
 */
interface Header {
  description: string;
  schema: { type: 'string' | 'integer'; example?: string | number };
}

interface Operation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ $ref: string } | { in: string; name: string }>;
  responses: Record<string, { headers?: Record<string, Header | { $ref: string }> }>;
}

interface OpenApiDoc {
  servers?: Array<{ url: string; description?: string; variables?: Record<string, { default: string; description?: string }> }>;
  paths?: Record<string, Record<string, Operation> | undefined>;
  components?: Record<string, unknown>;
  [key: string]: unknown;
}

const HEADERS: Record<string, Header> = {
  'X-Request-Id': { description: 'The request’s id (the caller’s own X-Request-Id when it sent a sane one); logs carry it', schema: { type: 'string', example: 'req_01jd8x2k3m4n5p6q7r8s9t0v1w' } },
  'X-RateLimit-Limit': { description: 'Requests allowed per minute in this rate area on the key’s plan', schema: { type: 'integer', example: 100 } },
  'X-RateLimit-Remaining': { description: 'Requests left before a 429 (the smaller remainder of the minute and hour windows)', schema: { type: 'integer', example: 99 } },
  'X-RateLimit-Reset': { description: 'Seconds until the window that binds resets', schema: { type: 'integer', example: 42 } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', example: 1 } },
  'X-Usage-Tokens-Limit': { description: 'The tenant’s monthly token budget (when the agent’s model is bound to one: models other than the built-in engine)', schema: { type: 'integer', example: 1000000 } },
  'X-Usage-Tokens-Remaining': { description: 'Tokens left this month, as of this turn', schema: { type: 'integer', example: 998512 } },
  'X-Usage-Tokens-Reset': { description: 'Seconds until the month turns and the budget resets', schema: { type: 'integer', example: 604800 } },
};

/** The model-backed operations: their answers carry the token budget's headers. */
const MODEL_BACKED = new Set(['converseWithAgent', 'createChatCompletion', 'createResponse']);

/** Where a deployment answers (local mode: the base URL its banner prints, e.g. http://localhost:3000). */
export const SERVERS: NonNullable<OpenApiDoc['servers']> = [
  {
    url: 'https://{restApiId}.execute-api.{region}.amazonaws.com/prod',
    description: 'A deployment of the CDK stack (the ApiUrl output)',
    variables: { restApiId: { default: 'abc123defg', description: 'The REST API id' }, region: { default: 'us-east-1', description: 'The AWS region' } },
  },
  {
    url: 'http://localhost:{port}',
    description: 'Local mode (npm start), on the PORT it prints',
    variables: { port: { default: '3000', description: 'PORT (default 3000)' } },
  },
];

/**
 * Completes a generated document in place: servers, response headers on every response (rate-limit
 * headers where `rateLimited` says the rate limiter answers: every response but 401, which comes
 * before the key is known), and on the platform's token routes the optional scope headers.
 */
export function completeDocument<D extends object>(generated: D, options: { rateLimited: boolean; scopeHeaders: boolean }): D {
  // The generator's types are wider than what it emits; this is the part of them this reads and writes.
  const doc = generated as OpenApiDoc;
  doc.servers = SERVERS;
  const components = (doc.components ??= {});
  const used = new Set<string>();
  const ref = (name: string) => {
    used.add(name);
    return { $ref: `#/components/headers/${name}` };
  };
  if (options.scopeHeaders) {
    components.parameters = {
      ...(components.parameters as object),
      TenantIdHeader: { in: 'header', name: SCOPE_HEADERS.tenant, required: false, description: 'When sent, must be the access token’s tenant (else 403)', schema: { type: 'string', example: 'acme' } },
      PgSchemaHeader: { in: 'header', name: SCOPE_HEADERS.schema, required: false, description: 'When sent, must be the access token’s schema (else 403)', schema: { type: 'string', example: 'tenant_acme' } },
    };
  }
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      const tokenRoute = operation.security?.some((s) => 'PlatformToken' in s) ?? false;
      if (options.scopeHeaders && tokenRoute) {
        operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/TenantIdHeader' }, { $ref: '#/components/parameters/PgSchemaHeader' }];
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers: Record<string, Header | { $ref: string }> = { ...response.headers, 'X-Request-Id': ref('X-Request-Id') };
        if (options.rateLimited && status !== '401') {
          for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) headers[name] = ref(name);
        }
        if (status === '429' || status === '503') headers['Retry-After'] = ref('Retry-After');
        if (status === '200' && MODEL_BACKED.has(operation.operationId ?? '')) for (const name of ['X-Usage-Tokens-Limit', 'X-Usage-Tokens-Remaining', 'X-Usage-Tokens-Reset']) headers[name] = ref(name);
        response.headers = headers;
      }
    }
  }
  components.headers = { ...(components.headers as object), ...Object.fromEntries([...used].map((name) => [name, HEADERS[name]])) };
  return generated;
}
