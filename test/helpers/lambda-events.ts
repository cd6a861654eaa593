import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

const template = JSON.parse(
  readFileSync(new URL('../fixtures/events/api-gateway-rest-proxy.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

/**
 * An API Gateway REST (v1 proxy) event as API Gateway sends it for a request, starting from a
 * recorded event: headers in both forms, the API key in the identity, the stage in the context.
 */
export function restEvent(
  method: string,
  pathWithQuery: string,
  options: { apiKey?: string; body?: unknown; headers?: Record<string, string> } = {},
): APIGatewayProxyEvent {
  const [path, query] = pathWithQuery.split('?') as [string, string | undefined];
  const event = structuredClone(template);
  const headers: Record<string, string> = { ...event.headers } as Record<string, string>;
  delete headers['x-api-key'];
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let body: string | null = null;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  Object.assign(headers, options.headers);
  const params = query ? new URLSearchParams(query) : undefined;
  const group = path.split('/')[2];
  return {
    ...event,
    resource: `/v1/${group}/{proxy+}`,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: params ? Object.fromEntries(params) : null,
    multiValueQueryStringParameters: params
      ? Object.fromEntries([...params.keys()].map((k) => [k, params.getAll(k)]))
      : null,
    pathParameters: { proxy: path.split('/').slice(3).join('/') },
    body,
    requestContext: {
      ...event.requestContext,
      httpMethod: method,
      path: `/prod${path}`,
      resourcePath: `/v1/${group}/{proxy+}`,
      identity: { ...event.requestContext.identity, apiKey: options.apiKey ?? null },
    },
  };
}

export const lambdaContext = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'cairn-agents',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:cairn-agents',
  memoryLimitInMB: '512',
  awsRequestId: 'a1b2c3d4-0000-4000-8000-000000000000',
  logGroupName: '/aws/lambda/cairn-agents',
  logStreamName: '2026/11/21/[$LATEST]abcdef',
  getRemainingTimeInMillis: () => 29_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

export async function invoke(handler: unknown, event: APIGatewayProxyEvent) {
  const result = await (handler as Handler)(event, lambdaContext);
  // API Gateway v1 responses may carry a header in `headers` or in `multiValueHeaders`.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name.toLowerCase()] = values.map(String).join(', ');
  const isJson = (headers['content-type'] ?? '').includes('application/json');
  return { ...result, headers, json: isJson && result.body ? JSON.parse(result.body) : undefined };
}
