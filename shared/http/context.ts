import type { Context } from 'hono';
import { systemClock, type Clock } from '../clock';
import type { PlatformToken } from '../platform/access-tokens';
import type { ApiKeyIdentity } from '../store/api-keys';

/** Variables middleware sets once and handlers read (`c.get('identity')`). */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Public API: the tenant and plan the API key resolved to. */
    identity: ApiKeyIdentity;
    /** Platform API: the verified access token and its tenant scope. */
    platformToken: PlatformToken;
    /** Inbound hooks: the hook that authenticated the request. */
    hook?: { id: string; workflowId: string; alias?: string; replayKey?: string };
    /** The runtime's clock (set first, by the request context): the envelope's timestamp, Retry-After. */
    clock: Clock;
    /** `openai`: errors of this request are shaped as OpenAI's (the OpenAI-compatible routes). */
    errorStyle?: 'openai';
    /** The route template a lazily built section matched (lazy-routes.ts), for the group's logs and metrics. */
    route?: string;
  };
}

/** The request's clock; the system's where no request context ran (a bare app in a middleware test). */
export const clockOf = (c: Context<AppEnv>): Clock => c.get('clock') ?? systemClock;
