import { z } from '@hono/zod-openapi';
import { isId } from '../ids';
import { guardrailsInput, type Guardrails } from '../guardrails';
import { toolOutput, toolsInput, type StoredTool } from '../tools';
import { aliasName } from '../releases';
import { between, fallbackModels, integerBetween, modelName, readOnlyFields, recordFields, shownFields, uniqueItems } from '../schema-helpers';

export const CAPABILITIES = ['chat', 'document-search'] as const;

/** The most knowledge sources one agent may search. */
export const MAX_AGENT_SOURCES = 20;

const knowledgeSourceId = z
  .string()
  .refine((id) => isId('knowledgeSource', id), { error: 'must be a knowledge source id (ks_…)' });

const agentFields = {
  name: z.string().trim().min(1).max(200).openapi({ example: 'Support bot' }),
  description: z.string().max(4000).default('').openapi({ example: 'Answers questions' }),
  model: modelName,
  fallbackModels: fallbackModels.optional(),
  temperature: between(0, 2).default(0.7).openapi({ example: 0.3 }),
  maxTokens: integerBetween(1, 200_000).default(1024).openapi({ example: 512 }),
  capabilities: z
    .array(z.enum(CAPABILITIES))
    .min(1)
    .max(CAPABILITIES.length)
    .superRefine(uniqueItems((c) => c, 'capability'))
    .default(['chat'])
    .openapi({ example: ['chat', 'document-search'] }),
  instructions: z.string().max(20_000).optional().openapi({ description: 'System prompt' }),
  maxToolSteps: integerBetween(1, 20).default(5).openapi({ description: 'Rounds of tool calls a turn may take before it must answer' }),
  knowledgeSourceIds: z
    .array(knowledgeSourceId)
    .max(MAX_AGENT_SOURCES)
    .superRefine(uniqueItems((id) => id, 'knowledge source id'))
    .default([])
    .openapi({ description: 'Knowledge sources of the same tenant' }),
  searchMode: z
    .enum(['lexical', 'hybrid'])
    .optional()
    .openapi({ description: 'How the agent searches its sources: hybrid (default) adds vectors and the reranker where a source has them; lexical is BM25F alone' }),
  guardrails: guardrailsInput.optional().openapi({ description: 'Personal data kept from the model provider, denied topics, blocked words: checked on the message, the reply and tool results' }),
  memory: z
    .strictObject({
      mode: z.enum(['off', 'rules', 'model']).openapi({ description: '`off`: nothing is remembered; `rules`: the built-in extraction (no model call, free); `model`: a model extracts, as work on the queue after the turn has answered' }),
      model: modelName.optional().openapi({ description: 'With mode `model`: the model that extracts (default: the agent’s own; a cheaper one is welcome)' }),
    })
    .refine((m) => m.model === undefined || m.mode === 'model', { error: 'is only for mode model', path: ['model'] })
    .default({ mode: 'rules' })
    .openapi('MemorySettings', { description: 'What the agent remembers of its users (context.userId) from their turns. A model’s extraction is a second call each turn, billed as usage of the operation `memory`: a choice, so the default is `rules`' }),
  handoffs: z
    .array(z.string().max(200).refine((address) => isId('agent', address.split(':')[0]!), { error: 'must name an agent: agt_…, with :<alias> or :<version> after it to run a release' }))
    .max(10)
    .superRefine(uniqueItems((a) => a, 'handoff'))
    .default([])
    .openapi({ description: 'Agents this one may hand the conversation to: its model gets a transfer_to_<name> tool for each; the target answers the turn, and the session’s later turns, until it hands back', example: ['agt_01jd8x2k3m4n5p6q7r8s9t0v1w:live'] }),
  a2a: z
    .strictObject({
      enabled: z.boolean().openapi({ description: 'Publish the agent over the A2A protocol: its card at /a2a/{agentId}/.well-known/agent-card.json, its endpoint at /a2a/{agentId}' }),
      alias: aliasName.optional().openapi({ description: 'The alias A2A tasks run (default: the draft)' }),
    })
    .optional()
    .openapi('A2ASettings', { description: 'The Agent2Agent protocol (1.0): other agents reach this one with an API key of the tenant' }),
};

/** The body of POST and PUT: PUT replaces, so both are validated alike. */
export const agentInput = z.strictObject({ ...agentFields, tools: toolsInput, ...readOnlyFields }).openapi('AgentInput', {
  example: {
    name: 'Support bot',
    description: 'Answers questions about orders and returns',
    model: 'local/extractive',
    instructions: 'Answer from the help centre; say so when it does not cover the question.',
    temperature: 0.3,
    maxTokens: 512,
    tools: [
      {
        type: 'http',
        name: 'order_status',
        description: 'Looks up the status of an order by its number',
        url: 'https://shop.example/orders/{{orderId}}',
        parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } }, required: ['orderId'] },
      },
    ],
  },
});

export const agent = z
  .object({
    ...recordFields,
    ...shownFields(agentFields),
    tools: z.array(toolOutput),
    id: z.string().openapi({ example: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
  })
  .openapi('Agent');

export type AgentInput = z.infer<typeof agentInput>;

/** A stored tool: its kind's own fields besides these, its secrets sealed (the tools room reads them). */
const storedTool = z.custom<StoredTool>((v) => typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string' && typeof (v as { name?: unknown }).name === 'string', { message: 'must be a tool with a type and a name' });

/**
 * An agent as stored: its tools' secrets sealed (`presentAgent` shows it). Structural (what each
 * field is, not the limits a write checks), so an agent written under older rules still reads;
 * settings added since read as their defaults. Agents stored before tools existed have none.
 */
export const storedAgent = z.object({
  ...recordFields,
  name: z.string(),
  description: z.string().default(''),
  model: z.string(),
  fallbackModels: z.array(z.string()).optional(),
  temperature: z.number(),
  maxTokens: z.number(),
  capabilities: z.array(z.enum(CAPABILITIES)),
  instructions: z.string().optional(),
  maxToolSteps: z.number().default(5),
  knowledgeSourceIds: z.array(z.string()).default([]),
  searchMode: z.enum(['lexical', 'hybrid']).optional(),
  guardrails: z.custom<Guardrails>((v) => typeof v === 'object' && v !== null).optional(),
  tools: z.array(storedTool).optional(),
  // Agents stored before the setting remember by the rules, as before.
  memory: z.object({ mode: z.enum(['off', 'rules', 'model']), model: z.string().optional() }).default({ mode: 'rules' }),
  a2a: z.object({ enabled: z.boolean(), alias: z.string().optional() }).optional(),
  handoffs: z.array(z.string()).default([]),
});
export type Agent = z.infer<typeof storedAgent>;
