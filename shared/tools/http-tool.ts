import { ToolFailure } from '../errors';
import { outboundRequest } from '../net/outbound';
import { templateText, urlComponent } from '../templates';
import { PLACEHOLDER, type HttpDefinition, type Stored } from './definitions';
import { toolAuthorization, type ToolAuthorization } from './tool-auth';
import { type ToolContext, type ToolKind } from './tool-kind';

/**
 * `http`: one call to a URL the tenant gives, through the outbound guard. The URL, header values and
 * JSON body are templates naming the tool's parameters (`{{orderId}}`).
 */

type HttpTool = Stored<HttpDefinition>;

/** `{{name}}` in a URL: the argument, URL-encoded (it cannot change the path or the host; `.` and `..` are invalid arguments). */
const renderUrl = (template: string, args: Record<string, unknown>) => template.replace(PLACEHOLDER, (_, name: string) => urlArgument(name, templateText(args[name])));

/** An argument as it goes in a URL, or the invalid-arguments failure the model is told of. */
export function urlArgument(name: string, value: string): string {
  const encoded = urlComponent(value);
  if (encoded === undefined) throw new ToolFailure(`invalid arguments: ${name} cannot be "${value}" (it would move along the URL's path)`, { invalidArguments: true });
  return encoded;
}

/** `{{name}}` in a header value: the argument, refused if it could start another header. */
function renderHeader(template: string, args: Record<string, unknown>): string {
  const value = template.replace(PLACEHOLDER, (_, name: string) => templateText(args[name]));
  if (/[\r\n]/.test(value)) throw new ToolFailure('invalid arguments: a header value cannot contain a line break', { invalidArguments: true });
  return value;
}

/** A JSON body template: a string that is exactly `{{name}}` becomes the argument itself, other strings interpolate. */
function renderBody(template: unknown, args: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(template);
    if (whole) return args[whole[1]!];
    return template.replace(PLACEHOLDER, (_, name: string) => templateText(args[name]));
  }
  if (Array.isArray(template)) return template.map((v) => renderBody(v, args));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderBody(v, args)]));
  return template;
}

/**
 * Sends one tool request through the guard, with its auth's headers; a 401 to an end user's token
 * is sent once more with the token refreshed. An answer outside 2xx is a failure the model reads.
 */
export async function sendToolRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: unknown; authorization?: ToolAuthorization },
  context: Pick<ToolContext, 'timeoutMs' | 'maxResultBytes' | 'signal' | 'policy' | 'idempotencyKey'>,
): Promise<string> {
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5', ...(context.idempotencyKey ? { 'idempotency-key': context.idempotencyKey } : {}), ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const send = (auth: Record<string, string>) =>
    outboundRequest(
      url,
      { method: init.method, headers: { ...headers, ...auth }, body: init.body === undefined ? undefined : JSON.stringify(init.body), timeoutMs: context.timeoutMs, maxBytes: context.maxResultBytes, signal: context.signal },
      context.policy,
    );
  const response = init.authorization ? await init.authorization.send(send) : await send({});
  const text = response.body.toString('utf8') + (response.truncated ? '\n[truncated]' : '');
  if (response.status < 200 || response.status >= 300) throw new ToolFailure(`HTTP ${response.status}: ${text.slice(0, 500)}`, { retryable: !(response.status >= 400 && response.status < 500 && response.status !== 429) });
  return text;
}

export const httpTool: ToolKind<HttpDefinition, HttpTool> = {
  type: 'http',
  expose: (tool) => [
    {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      async call(args, context) {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(tool.headers ?? {})) headers[name.toLowerCase()] = renderHeader(value, args);
        const sendsBody = tool.method !== 'GET' && tool.method !== 'DELETE';
        const body = tool.body !== undefined ? renderBody(tool.body, args) : sendsBody ? args : undefined;
        const authorization = await toolAuthorization(context, tool.name, tool.auth);
        return sendToolRequest(renderUrl(tool.url, args), { method: tool.method, headers, body, authorization }, context);
      },
    },
  ],
};
