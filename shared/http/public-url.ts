import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { config } from '../config';
import { AppError } from '../errors';
import type { AppEnv } from './context';

/**
 * This API's base URL, for URLs handed to others (A2A endpoints, the OAuth callback): from
 * configuration (`PUBLIC_BASE_URL`), else where the request arrived as its adapter knows it —
 * API Gateway's own domain and stage in AWS, the local server's port on localhost — never from
 * a header a client chooses (`Host`, `X-Forwarded-*`): a forged one would send an authorization
 * code to another site.
 */
export function publicBaseUrl(c: Context<AppEnv>): string {
  if (config.publicBaseUrl) return config.publicBaseUrl;
  const env = c.env as { event?: { requestContext?: { stage?: string; domainName?: string } }; incoming?: IncomingMessage } | undefined;
  if (env?.event) {
    const { domainName, stage } = env.event.requestContext ?? {};
    if (!domainName) throw new AppError('INTERNAL_ERROR', 'This API cannot name its own URL: set PUBLIC_BASE_URL');
    // The stage is part of the path on an execute-api host; a custom domain maps it away.
    const prefix = stage && stage !== '$default' && domainName.includes('.execute-api.') ? `/${stage}` : '';
    return `https://${domainName}${prefix}`;
  }
  const port = env?.incoming?.socket?.localPort;
  if (port) return `http://localhost:${port}`;
  // Called in-process (app.request): the URL its caller built is the only address there is.
  return new URL(c.req.url).origin;
}

/** Where OAuth providers send end users back to (GET /v1/oauth/callback). */
export const oauthCallbackUrl = (c: Context<AppEnv>) => `${publicBaseUrl(c)}/v1/oauth/callback`;
