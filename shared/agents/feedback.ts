import { z } from '@hono/zod-openapi';
import { isoNow } from '../clock';
import { NotFoundError, ValidationError } from '../errors';
import type { Runtime } from '../runtime';
import type { MessageFeedback, SessionMessage } from '../store/sessions';
import { inSpan } from '../telemetry';
import type { TenantScope } from '../tenancy';
import { recordUsage } from '../usage';
import { agents } from './agents';

/**
 * Feedback on an agent's replies: a person rates a stored reply up or down (with a comment); the
 * rating is kept with the message, counted in usage (feedbackUp, feedbackDown), and can turn the
 * reply and its question into an evaluation case.
 */
export const feedbackInput = z
  .strictObject({
    rating: z.enum(['up', 'down']),
    comment: z.string().trim().max(4000).optional(),
  })
  .openapi('FeedbackInput', { example: { rating: 'down', comment: 'Cites the old returns policy' } });

const countOf = (rating: MessageFeedback['rating'] | undefined) => (rating === 'up' ? 'feedbackUp' : rating === 'down' ? 'feedbackDown' : undefined);

/** A stored assistant message: 404 for an unknown agent, session or message; 400 for a user message. */
export async function assistantMessage(rt: Runtime, scope: TenantScope, agentId: string, sessionId: string, messageId: string): Promise<SessionMessage> {
  await agents.get(rt, scope, agentId);
  const message = await rt.store.sessions.getMessage(scope, agentId, sessionId, messageId);
  if (!message) throw new NotFoundError('message', messageId);
  if (message.role !== 'assistant') throw new ValidationError('messageId', `names a user message: feedback is on the agent's replies`);
  return message;
}

/** Rates a reply (a second rating replaces the first, and the usage counts move with it). */
export async function rateMessage(rt: Runtime, scope: TenantScope, ids: { agentId: string; sessionId: string; messageId: string }, input: z.infer<typeof feedbackInput>, keyId?: string): Promise<SessionMessage> {
  const message = await assistantMessage(rt, scope, ids.agentId, ids.sessionId, ids.messageId);
  const feedback: MessageFeedback = { rating: input.rating, ...(input.comment ? { comment: input.comment } : {}), at: isoNow(rt.clock) };
  // A span of its own, so traces can count ratings by agent and version as usage does.
  const attributes = { 'cairn.agent.id': ids.agentId, 'cairn.message.id': ids.messageId, 'cairn.feedback.rating': input.rating, ...(message.agentVersion !== undefined ? { 'cairn.agent.version': String(message.agentVersion) } : {}) };
  const before = await inSpan(`feedback ${input.rating}`, { attributes }, () => rt.store.sessions.setFeedback(scope, ids.agentId, ids.sessionId, ids.messageId, feedback));
  // The message expired or was deleted between the read and the write.
  if (!before) throw new NotFoundError('message', ids.messageId);
  const was = countOf(before.feedback?.rating);
  const now = countOf(feedback.rating)!;
  if (was !== now) {
    await recordUsage(rt, scope, {
      keyId,
      subject: { kind: 'agent', id: ids.agentId },
      model: message.model,
      release: message.agentVersion,
      [now]: 1,
      ...(was ? { [was]: -1 } : {}),
    });
  }
  return { ...before, feedback };
}
