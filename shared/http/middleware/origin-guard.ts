import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { config } from '../../config';
import { AppError } from '../../errors';
import { isThisMachine } from '../../net/outbound';
import type { AppEnv } from '../context';
import { publicBaseUrl } from '../public-url';

/**
 * DNS-rebinding protection for an endpoint a browser page could reach on a user's own machine
 * (MCP's Streamable HTTP transport requires it): a request that names an `Origin` must come from
 * one CORS_ORIGINS allows or from this API's own public origin (else 403); and where the server
 * listens itself (local mode), its `Host` must name this server — localhost, an address of this
 * machine, or PUBLIC_BASE_URL's host — on its own port, so a foreign name made to resolve to
 * 127.0.0.1 is refused.
 */
export function originGuard(origins: readonly string[] = config.corsOrigins): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const own = new URL(publicBaseUrl(c));
    const port = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.localPort;
    const origin = c.req.header('origin');
    const ownOrigin = (value: string) => value === own.origin || (port !== undefined && URL.canParse(value) && ownHost(new URL(value).host, port, own));
    if (origin !== undefined && !origins.includes('*') && !origins.includes(origin) && !ownOrigin(origin)) {
      throw new AppError('FORBIDDEN', `Origin ${origin} may not call this endpoint: allow it in CORS_ORIGINS`, { origin });
    }
    const host = c.req.header('host');
    if (port !== undefined && host !== undefined && !ownHost(host, port, own)) {
      throw new AppError('FORBIDDEN', `Host ${host} is not this server`, { host });
    }
    await next();
  };
}

function ownHost(host: string, port: number, own: URL): boolean {
  if (!URL.canParse(`http://${host}`)) return false;
  const given = new URL(`http://${host}`);
  const name = given.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === own.hostname.replace(/^\[|\]$/g, '').toLowerCase() && given.port === own.port) return true;
  return (name === 'localhost' || isThisMachine(name)) && Number(given.port || 80) === port;
}
