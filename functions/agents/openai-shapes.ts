import { z } from '@hono/zod-openapi';
import { source } from './conversation-routes';

/**
 * What the OpenAI-compatible routes answer, as OpenAI documents it (the fields Cairn fills), so
 * that generated clients and the console read typed values. Cairn's own additions stand under
 * `cairn`.
 */
const toolCall = z
  .object({
    id: z.string(),
    type: z.literal('function'),
    function: z.object({ name: z.string(), arguments: z.string().openapi({ description: 'The arguments, as a JSON text' }) }),
  })
  .openapi('ChatCompletionToolCall');

const chatUsage = z
  .object({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int(), prompt_tokens_details: z.object({ cached_tokens: z.int().openapi({ description: 'Of the prompt tokens, those the provider read from its prompt cache' }) }) })
  .openapi('ChatCompletionUsage');

/** With `store: true`: where the exchange is kept, for feedback (POST /v1/agents/{agentId}/sessions/{sessionId}/messages/{messageId}/feedback). */
const stored = {
  sessionId: z.string().optional().openapi({ description: 'With store: true, the session the exchange is kept in' }),
  messageId: z.string().optional().openapi({ description: 'With store: true, the stored reply’s id (what feedback names)' }),
  guardrails: z.array(z.record(z.string(), z.unknown())).optional().openapi({ description: 'What the agent’s guardrails found (as converse reports it); a refused turn’s reply is their blocked message' }),
};

/** The session and message a stored exchange is kept as (nothing when it was not stored), and what the guardrails found. */
export const storedAs = (done: { sessionId: string; messageId?: string; guardrails?: unknown[] }) => ({
  ...(done.messageId ? { sessionId: done.sessionId, messageId: done.messageId } : {}),
  ...(done.guardrails ? { guardrails: done.guardrails } : {}),
});

export const chatCompletion = z
  .object({
    id: z.string().openapi({ example: 'chatcmpl-01jq…' }),
    object: z.literal('chat.completion'),
    created: z.int().openapi({ description: 'Unix seconds' }),
    model: z.string().openapi({ description: 'As requested: the agent id, with `:<alias>` or `:<version>` when one was named' }),
    choices: z.array(
      z.object({
        index: z.int(),
        message: z.object({ role: z.literal('assistant'), content: z.string().nullable(), tool_calls: z.array(toolCall).optional() }),
        finish_reason: z.enum(['stop', 'length', 'content_filter', 'tool_calls']),
      }),
    ),
    usage: chatUsage,
    cairn: z
      .object({
        model: z.string().openapi({ description: 'The model that answered (`provider/model`)' }),
        agentId: z.string().optional().openapi({ description: 'The agent that answered: the one named, or the one it handed the conversation to' }),
        sources: z.array(source).openapi({ description: 'The passages the reply cites, as converse lists them' }),
        agentVersion: z.union([z.int(), z.literal('draft')]).openapi({ description: 'The agent definition that answered: a version number, or draft (model `<agentId>:<alias|version>` picks one)' }),
        ...stored,
      })
      .openapi({ description: 'Cairn’s additions' }),
  })
  .openapi('ChatCompletion');

const outputText = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()) });

export const responseObject = z
  .object({
    id: z.string().openapi({ example: 'resp_01jq…' }),
    object: z.literal('response'),
    created_at: z.int().openapi({ description: 'Unix seconds' }),
    status: z.enum(['completed', 'incomplete', 'in_progress', 'queued', 'cancelled', 'failed']).openapi({ description: 'queued, in_progress and cancelled: a background response (`background: true`)' }),
    background: z.boolean().optional(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    model: z.string().openapi({ description: 'As requested: the agent id' }),
    output: z.array(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('message'), id: z.string(), status: z.literal('completed'), role: z.literal('assistant'), content: z.array(outputText) }),
        z.object({ type: z.literal('function_call'), id: z.string(), call_id: z.string(), name: z.string(), arguments: z.string(), status: z.literal('completed') }),
      ]),
    ),
    usage: z
      .object({
        input_tokens: z.int(),
        output_tokens: z.int(),
        total_tokens: z.int(),
        input_tokens_details: z.object({ cached_tokens: z.int() }),
        output_tokens_details: z.object({ reasoning_tokens: z.int() }),
      })
      .nullable(),
    cairn: z
      .object({ model: z.string(), agentId: z.string().optional().openapi({ description: 'The agent that answered (a handoff’s target, when the agent handed over)' }), agentVersion: z.union([z.int(), z.literal('draft')]).openapi({ description: 'The agent definition that answered: a version number, or draft' }), ...stored })
      .openapi({ description: 'Cairn’s additions' }),
  })
  .openapi('Response');
