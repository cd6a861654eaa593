import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { endUserOf, turnUser, type EndUser } from '../identity';
import type { Runtime } from '../runtime';
import type { AppEnv } from './context';
import { oauthCallbackUrl } from './public-url';

/** The header that carries an end user's token from the tenant's identity provider. */
export const END_USER_TOKEN_HEADER = 'x-end-user-token';

/** The header as routes declare it (OpenAPI, validation). */
export const endUserTokenHeaders = z.object({
  [END_USER_TOKEN_HEADER]: z
    .string()
    .max(16_384)
    .optional()
    .openapi({ description: 'The end user’s token (a JWT from the identity provider set by PUT /platform/end-user-auth): Cairn verifies it and acts for the user it names, with their groups. Invalid: 401 END_USER_TOKEN_INVALID, details.reason saying why' }),
});

/** Who this request acts for: the verified token's user, or the caller's `context.userId` and `context.groups`. */
export const requestEndUser = (c: Context<AppEnv>, rt: Runtime, context?: { userId?: string; groups?: string[] }): Promise<EndUser | undefined> =>
  endUserOf(rt, c.get('identity').scope, { token: c.req.header(END_USER_TOKEN_HEADER), ...context });

/**
 * What an agent turn a request starts knows of its end user: who they are (as `requestEndUser`),
 * and where an OAuth provider sends them back when the turn asks them to connect an account.
 */
export const turnEndUser = async (c: Context<AppEnv>, rt: Runtime, context?: { userId?: string; groups?: string[] }) => ({
  ...turnUser(await requestEndUser(c, rt, context)),
  callbackUrl: oauthCallbackUrl(c),
});
