import type { Context } from 'hono';
import type { AppEnv } from './context';

/**
 * This API's base URL as the request reached it (scheme, host, and API Gateway's stage on an
 * execute-api host), for URLs handed to others: A2A endpoints, the OAuth callback.
 */
export function publicBaseUrl(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  const request = (c.env as { event?: { requestContext?: { stage?: string; domainName?: string } } } | undefined)?.event?.requestContext;
  const stage = request?.stage && request.stage !== '$default' && request.domainName?.includes('.execute-api.') ? `/${request.stage}` : '';
  const proto = c.req.header('x-forwarded-proto') ?? url.protocol.replace(':', '');
  return `${proto}://${c.req.header('host') ?? url.host}${stage}`;
}

/** Where OAuth providers send end users back to (GET /v1/oauth/callback), as this request reached the API. */
export const oauthCallbackUrl = (c: Context<AppEnv>) => `${publicBaseUrl(c)}/v1/oauth/callback`;
