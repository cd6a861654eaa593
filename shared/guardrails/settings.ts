import { z } from '@hono/zod-openapi';
import { analyze } from '../search/analyzer';
import { PII_ENTITIES } from './pii';

/**
 * An agent's guardrails (and a tenant's defaults, which an agent's own extend): personal data to
 * tokenize, mask or block, topics and words to refuse, and the message a refusal gives.
 */
const phrase = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine((p) => analyze(p).length > 0, { error: 'has no word the analyzer keeps (only stop words?): name the topic in content words' });

export const guardrailsInput = z
  .strictObject({
    mode: z.enum(['enforce', 'detect']).optional().openapi({ description: 'enforce (default): act on what is found; detect: only report it, to try rules on live traffic first' }),
    pii: z
      .strictObject({
        entities: z
          .array(z.enum(PII_ENTITIES))
          .min(1)
          .refine((list) => new Set(list).size === list.length, { error: 'must not repeat an entity' }),
        action: z.enum(['tokenize', 'mask', 'block']).openapi({ description: 'tokenize: a stable token (<EMAIL_1>) the provider sees, the person sees the value; mask: [EMAIL] everywhere, kept nowhere; block: the turn is refused' }),
      })
      .optional(),
    deniedTopics: z
      .array(z.strictObject({ name: z.string().trim().min(1).max(100), phrases: z.array(phrase).min(1).max(50) }))
      .max(30)
      .optional()
      .openapi({ description: 'A message matching a phrase (through the search analyzer: "buying crypto" matches "buy crypto") is refused' }),
    blockedWords: z.array(z.string().trim().min(1).max(100)).max(500).optional().openapi({ description: 'Words or phrases refused in the message, the reply and tool results (whole words, any case)' }),
    blockedMessage: z.string().trim().min(1).max(2000).optional().openapi({ description: 'The reply of a refused turn', example: "Sorry, I can't help with that." }),
    bedrockGuardrail: z
      .strictObject({ identifier: z.string().min(1).max(2048), version: z.string().min(1).max(16) })
      .optional()
      .openapi({ description: 'With a bedrock/ model: an Amazon Bedrock guardrail the Converse API applies as well' }),
  })
  .openapi('Guardrails', {
    example: {
      mode: 'enforce',
      pii: { entities: ['email', 'phone', 'credit_card', 'iban'], action: 'tokenize' },
      deniedTopics: [{ name: 'investment advice', phrases: ['which stocks', 'buy crypto'] }],
      blockedWords: ['idiot'],
      blockedMessage: "Sorry, I can't help with that.",
    },
  });
export type Guardrails = z.infer<typeof guardrailsInput>;

export const DEFAULT_BLOCKED_MESSAGE = "Sorry, I can't help with that.";

/**
 * A tenant's defaults extended by an agent's own: lists are joined, and what the agent sets
 * (mode, the PII action, the message, the Bedrock guardrail) wins.
 */
export function effectiveGuardrails(tenant: Guardrails | undefined, agent: Guardrails | undefined): Guardrails | undefined {
  if (!tenant) return agent;
  if (!agent) return tenant;
  const entities = [...new Set([...(tenant.pii?.entities ?? []), ...(agent.pii?.entities ?? [])])];
  const action = agent.pii?.action ?? tenant.pii?.action;
  return {
    mode: agent.mode ?? tenant.mode,
    ...(entities.length > 0 && action ? { pii: { entities, action } } : {}),
    deniedTopics: [...(tenant.deniedTopics ?? []), ...(agent.deniedTopics ?? [])],
    blockedWords: [...new Set([...(tenant.blockedWords ?? []), ...(agent.blockedWords ?? [])])],
    ...((agent.blockedMessage ?? tenant.blockedMessage) ? { blockedMessage: agent.blockedMessage ?? tenant.blockedMessage } : {}),
    ...((agent.bedrockGuardrail ?? tenant.bedrockGuardrail) ? { bedrockGuardrail: agent.bedrockGuardrail ?? tenant.bedrockGuardrail } : {}),
  };
}
