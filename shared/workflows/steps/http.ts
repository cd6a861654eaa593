import { z } from '@hono/zod-openapi';
import { AppError, UpstreamError } from '../../errors';
import { outboundRequest } from '../../net/outbound';
import { integerBetween } from '../../schema-helpers';
import { assertCallAllowed, authInput, toolAuthorization, policyInput, policyIssues, sealAuth, showAuth, type StoredAuth } from '../../tools';
import { renderDeep, renderTemplate, TEMPLATE, templateText, urlComponent, type TemplateScope } from '../../templates';
import type { WorkKind } from './step-kind';
import { endUserOfView, userView } from '../../identity';

export const MAX_HTTP_RESPONSE_BYTES = 256 * 1024;

const config = z
  .strictObject({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
    url: z.string().min(1).max(4000).openapi({ example: 'https://shop.example/orders/{{parameters.orderId}}', description: 'Template; values placed after the start of the URL are URL-encoded' }),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, { error: 'must be a header name' }), z.string().max(4000)).optional().openapi({ description: 'Values are templates' }),
    body: z.unknown().optional().openapi({ description: 'JSON whose strings are templates (a string that is exactly one template becomes its value); sent as application/json' }),
    auth: authInput.optional().openapi({ description: 'Sealed when stored; responses show `{type, configured: true}`' }),
    expect: z.array(integerBetween(100, 599)).min(1).max(50).optional().openapi({ description: 'Statuses that count as success (default: any 2xx)' }),
    maxResponseBytes: integerBetween(1, MAX_HTTP_RESPONSE_BYTES).default(64 * 1024),
    policy: policyInput.optional().openapi({ description: 'Rules on the request as agents’ tools have them, over arguments {method, url, body}: one that denies it (or would hold it for a person) fails the step for good' }),
  })
  .superRefine((cfg, ctx) => {
    let url: URL | undefined;
    try {
      url = new URL(cfg.url.replace(TEMPLATE, 'x'));
    } catch {
      /* reported below */
    }
    // A URL that starts with a template is only known at run time (the guard checks it then).
    if (!cfg.url.startsWith('{{') && (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))) ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be an http or https URL' });
    if (cfg.body !== undefined && (cfg.method === 'GET' || cfg.method === 'HEAD')) ctx.addIssue({ code: 'custom', path: ['body'], message: `cannot be sent with ${cfg.method}` });
    for (const issue of policyIssues(cfg.policy, { arguments: ['method', 'url', 'body'], agent: false })) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });

type Config = z.infer<typeof config>;
/** Stored: the auth's secret sealed. */
type StoredConfig = Omit<Config, 'auth'> & { auth?: StoredAuth };

/** A value placed in the URL is encoded, unless its template starts the URL (it then gives the origin). */
function renderUrl(template: string, vars: TemplateScope): string {
  return template.replace(TEMPLATE, (match, expr: string, offset: number) => {
    const value = renderTemplate(match, vars);
    if (offset === 0) return value;
    const encoded = urlComponent(value);
    if (encoded === undefined) throw new AppError('UNPROCESSABLE', `url: {{${expr}}} rendered as "${value}", which would move along the URL's path`, { field: 'url' }, { retryable: false });
    return encoded;
  });
}

function renderHeader(template: string, vars: TemplateScope): string {
  const value = renderTemplate(template, vars);
  if (/[\r\n]/.test(value)) throw new UpstreamError('A header value cannot contain a line break', { reason: 'header' }, { retryable: false });
  return value;
}

/** What a step's sealed secret is bound to, beside the tenant. */
const SEALED_AS = 'workflow-step';

/** Whether a status that is not expected may be different next time (rate limits, timeouts, server errors). */
const transientStatus = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

/**
 * `http`: one request to a URL, through the outbound guard (public addresses only, every redirect
 * checked, time and size bounded). Output `{status, headers, body}`, the body parsed when it is JSON.
 * A status outside `expect` fails the step, retryably when it is 408, 429 or 5xx.
 */
export const http: WorkKind<typeof config> = {
  type: 'http',
  config,
  templateFields: ['url', 'headers', 'body'],
  isOutputPath: (p) => p[0] === 'body' || (p.length === 1 && ['status', 'headers'].includes(p[0]!)) || (p.length === 2 && p[0] === 'headers'),
  async prepare(cfg, { rt, scope, path, current }) {
    if (!cfg.auth) return cfg;
    const kept = (current as StoredConfig | undefined)?.auth;
    return { ...cfg, auth: (await sealAuth(rt, scope, SEALED_AS, cfg.auth, kept, `${path}.auth`)) as never };
  },
  present: (cfg) => {
    const stored = cfg as StoredConfig;
    return stored.auth ? { ...stored, auth: showAuth(stored.auth) } : stored;
  },
  async execute(cfg, { rt, scope, vars, deadline, timeoutMs }) {
    const stored = cfg as StoredConfig;
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' };
    for (const [name, value] of Object.entries(stored.headers ?? {})) headers[name.toLowerCase()] = renderHeader(value, vars);
    let body: string | undefined;
    if (stored.body !== undefined) {
      body = JSON.stringify(renderDeep(stored.body, vars));
      headers['content-type'] ??= 'application/json';
    }
    const url = renderUrl(stored.url, vars);
    await assertCallAllowed(stored.policy, false, { arguments: { method: stored.method, url, ...(body !== undefined ? { body: JSON.parse(body) as unknown } : {}) }, user: vars.user ?? userView(undefined), tenant: { id: scope.tenantId }, tool: 'http' });
    // An end user's token (oauth2) is theirs: the execution's user, verified or given by the trusted caller.
    const authorization = await toolAuthorization({ rt, scope, user: endUserOfView(vars.user) }, SEALED_AS, stored.auth);
    const send = (auth: Record<string, string>) => outboundRequest(url, { method: stored.method, headers: { ...headers, ...auth }, body, timeoutMs: timeoutMs ?? 30_000, maxBytes: stored.maxResponseBytes, signal: deadline }, rt.outbound);
    const response = await authorization.send(send);
    const text = response.body.toString('utf8');
    const isJson = /[/+]json\b/i.test(response.headers['content-type'] ?? '');
    let parsed: unknown = text;
    if (isJson && !response.truncated && text.trim() !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        /* kept as text */
      }
    }
    const ok = stored.expect ? stored.expect.includes(response.status) : response.status >= 200 && response.status < 300;
    if (!ok) {
      throw new UpstreamError(`${stored.method} ${new URL(response.url).host} answered ${response.status}: ${templateText(parsed).slice(0, 300)}`, { status: response.status }, { retryable: transientStatus(response.status) });
    }
    const shown = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !/^(set-cookie|authorization)$/i.test(name)));
    return { output: { status: response.status, headers: shown, body: parsed, ...(response.truncated ? { truncated: true } : {}) } };
  },
};
