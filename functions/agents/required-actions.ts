import { z } from '@hono/zod-openapi';

/** What the end user must do before a paused turn or run goes on, as responses show it. */
export const requiredAction = z
  .object({
    type: z.literal('authorization'),
    provider: z.string().openapi({ description: 'The OAuth provider (POST /v1/oauth-providers) the end user connects an account at' }),
    url: z.string().openapi({ description: 'Where the end user goes to connect it (authorization code with PKCE; single use, ten minutes)' }),
  })
  .openapi('RequiredAction');

export const requiredActions = z
  .array(requiredAction)
  .optional()
  .openapi({ description: 'With status requires_action: accounts the end user must connect first. Once they have (the callback page says so), resume — a session’s turn with `{context: {sessionId}, resume: true}`; a background run goes on by itself' });
