import { CODE_LIMITS } from '../code/code-job';
import { AppError } from '../errors';
import type { CodeToolDefinition, ToolKind } from '../tools';
import { recordUsage } from '../usage';

/**
 * `code`: the model writes a script and Cairn runs it in the sandbox (code/javascript-sandbox.ts:
 * QuickJS, a fresh context each call, no network or files), under the default limits. The tool's
 * result is JSON of what the script returned and the lines it logged; a script that throws, or
 * passes a limit, is a tool error naming where.
 */
export const codeTool: ToolKind<CodeToolDefinition, CodeToolDefinition> = {
  type: 'code',
  expose: (tool) => [
    {
      name: tool.name,
      description: tool.description,
      parameters: {
        type: 'object',
        properties: { source: { type: 'string', description: 'JavaScript: a script whose top-level `return` gives the result (or one that exports `default function main()`)' } },
        required: ['source'],
      },
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      async call(args, { rt, scope, agent, keyId }) {
        if (!rt.code) throw new AppError('INTERNAL_ERROR', 'This function cannot run code (no code runner: CODE_RUNNER_FUNCTION is not set)');
        const result = await rt.code.run({ op: 'run', language: tool.language, source: String(args.source), form: 'script', args: {}, timeoutMs: CODE_LIMITS.timeoutMs.default, memoryMb: CODE_LIMITS.memoryMb.default });
        if (agent) await recordUsage(rt, scope, { keyId, subject: { kind: 'agent', id: agent.id }, codeMs: Math.ceil(result.ms) });
        if (!result.ok) {
          const { message, line, column } = result.error;
          const where = line !== undefined ? ` (line ${line}${column !== undefined ? `, column ${column}` : ''})` : '';
          throw new AppError('UNPROCESSABLE', `${message}${where}${result.logs.length > 0 ? `; it logged: ${result.logs.join(' | ').slice(0, 2000)}` : ''}`, { kind: result.error.kind }, { retryable: false });
        }
        return JSON.stringify({ result: result.value, ...(result.logs.length > 0 ? { logs: result.logs } : {}) });
      },
    },
  ],
};
