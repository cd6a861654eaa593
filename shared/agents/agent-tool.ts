import { AppError } from '../errors';
import type { AgentToolDefinition, ToolKind } from '../tools';

/**
 * `agent`: another of the tenant's agents, asked by the model with a message (and any context it
 * wants to pass on). The callee answers in a child session linked to the caller's, under its own
 * instructions, knowledge, tools, guardrails and policies; its reply is the tool's result and its
 * sources join the caller's. The calling turn does the asking (`context.askAgent`, turn.ts): it
 * knows the chain of agents above it, which bounds how deep asking may go.
 */
export const agentTool: ToolKind<AgentToolDefinition, AgentToolDefinition> = {
  type: 'agent',
  expose: (tool) => [
    {
      name: tool.name,
      description: tool.description,
      parameters: {
        type: 'object',
        properties: {
          message: { type: 'string', description: 'What to ask the agent, in full: it sees nothing else of this conversation' },
          context: { type: 'string', description: 'Facts from this conversation the agent needs (optional)' },
        },
        required: ['message'],
      },
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      call(args, context) {
        if (!context.askAgent) throw new AppError('UNPROCESSABLE', 'Only an agent’s turn can ask another agent', undefined, { retryable: false });
        return context.askAgent(tool.agent, { message: String(args.message), ...(typeof args.context === 'string' && args.context ? { context: args.context } : {}) }, context.resume);
      },
    },
  ],
};
