import { createHash, randomUUID } from 'node:crypto';
import type { AgentCard, Message, Part, StreamResponse, Task } from '@a2a-js/sdk';
import { AppError, ToolFailure } from '../errors';
import { outboundFetch } from '../net/outbound';
import type { A2aToolDefinition, Stored } from './definitions';
import { authorizedFetch, toolAuthorization } from './tool-auth';
import type { ToolContext, ToolKind, ToolReply } from './tool-kind';

/**
 * `a2a`: a remote agent, asked over the Agent2Agent protocol (1.0) with the official SDK's client:
 * its card is read (kept 5 minutes per instance), the message sent — streamed when the card offers
 * streaming, else sent and the task polled — and the task followed to its end; the answer is its
 * artifacts' text (and data as JSON). Every request, the card's included, goes through the outbound
 * guard, with the tool's auth. A task that asks for input, or fails, is the tool's error.
 */
type A2aTool = Stored<A2aToolDefinition>;

/** How long one call follows a remote task before answering that it is still working. */
const A2A_CALL_MS = 120_000;
const TERMINAL = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
const INTERRUPTED = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

// Loaded when first called: most functions never ask a remote agent.
const sdk = () => Promise.all([import('@a2a-js/sdk'), import('@a2a-js/sdk/client')]);

const partText = (p: Part) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? JSON.stringify(p.content.value) : p.content?.$case === 'url' ? p.content.value : '');
const partsText = (parts: Part[]) => parts.map(partText).filter(Boolean).join('\n');

/** A fetch through the guard, with the tool's auth on every request. */
async function guardedFetch(tool: A2aTool, context: ToolContext): Promise<typeof fetch> {
  return authorizedFetch(await toolAuthorization(context, tool.name, tool.auth), outboundFetch(context.policy, { timeoutMs: A2A_CALL_MS }));
}

async function cardOf(tool: A2aTool, context: ToolContext, fetchImpl: typeof fetch): Promise<AgentCard> {
  const key = createHash('sha256').update(JSON.stringify([context.scope.tenantId, tool.card, tool.auth ?? null])).digest('base64url');
  const cached = context.rt.caches.a2aCards.get(key) as AgentCard | undefined;
  if (cached) return cached;
  const [{ AgentCard }] = await sdk();
  const response = await fetchImpl(tool.card, { headers: { accept: 'application/json', 'a2a-version': '1.0' }, signal: context.signal });
  if (!response.ok) throw new ToolFailure(`the agent card at ${new URL(tool.card).host} answered ${response.status}`, { retryable: response.status >= 500 });
  const card = AgentCard.fromJSON(await response.json());
  if (card.supportedInterfaces.length === 0) throw new ToolFailure(`the agent card at ${tool.card} names no interface to reach the agent at`, { retryable: false });
  context.rt.caches.a2aCards.set(key, card);
  return card;
}

/** The task as the events so far make it. */
function applied(task: Task | undefined, event: StreamResponse): Task | Message | undefined {
  const payload = event.payload;
  if (!payload) return task;
  if (payload.$case === 'task' || payload.$case === 'message') return payload.value;
  if (!task) return task;
  if (payload.$case === 'statusUpdate') return { ...task, status: payload.value.status };
  const artifact = payload.value.artifact;
  if (!artifact) return task;
  const existing = task.artifacts.find((a) => a.artifactId === artifact.artifactId);
  const artifacts = existing && payload.value.append ? task.artifacts.map((a) => (a === existing ? { ...a, parts: [...a.parts, ...artifact.parts] } : a)) : [...task.artifacts.filter((a) => a.artifactId !== artifact.artifactId), artifact];
  return { ...task, artifacts };
}

async function ask(tool: A2aTool, args: Record<string, unknown>, context: ToolContext): Promise<ToolReply> {
  const [{ SendMessageRequest, TaskState, taskStateToJSON }, { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory }] = await sdk();
  const fetchImpl = await guardedFetch(tool, context);
  const card = await cardOf(tool, context, fetchImpl);
  const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })] })).createFromAgentCard(card);
  const signal = AbortSignal.any([AbortSignal.timeout(A2A_CALL_MS), ...(context.signal ? [context.signal] : [])]);
  // The same id on every attempt of one call: a remote that deduplicates messages does it once.
  // Going on after a person's decision, the answer goes to the task that asked for it.
  const resume = context.resume;
  const answer = resume ? (resume.approval.approved ? resume.approval.reason || 'approve' : `reject${resume.approval.reason ? `: ${resume.approval.reason}` : ''}`) : String(args.message);
  const request = SendMessageRequest.fromJSON({
    message: { messageId: `${context.idempotencyKey ?? randomUUID()}${resume ? '-answer' : ''}`, role: 'ROLE_USER', parts: [{ text: answer }], ...(resume ? { taskId: String(resume.state.taskId), contextId: String(resume.state.contextId) } : {}) },
  });
  let result: Task | Message | undefined;
  if (card.capabilities?.streaming) {
    for await (const event of client.sendMessageStream(request, { signal })) result = applied(result && 'status' in result ? result : undefined, event);
  } else {
    result = await client.sendMessage(request, { signal });
  }
  if (!result) throw new ToolFailure('the remote agent answered nothing');
  if (!('status' in result)) return partsText(result.parts);
  let task = result;
  // A stream that ended early, or a send that came back at once: the task is polled to its end.
  for (let pause = 200; !TERMINAL.has(taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) && !INTERRUPTED.has(taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)); pause = Math.min(2000, pause * 2)) {
    if (signal.aborted) return `The remote agent is still working on it (task ${task.id}); its answer is not available yet.`;
    await new Promise((resolve) => setTimeout(resolve, pause));
    task = await client.getTask({ tenant: '', id: task.id }, { signal });
  }
  const state = taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
  const said = task.status?.message ? partsText(task.status.message.parts) : '';
  if (state === 'TASK_STATE_COMPLETED') return task.artifacts.map((a) => partsText(a.parts)).filter(Boolean).join('\n\n') || said || 'The remote agent finished without an answer.';
  if (INTERRUPTED.has(state)) {
    const asks = `the remote agent asks for ${state === 'TASK_STATE_AUTH_REQUIRED' ? 'authorization' : 'input'} (task ${task.id}): ${said.slice(0, 1000)}`;
    // A turn that can wait for a person waits: the person's answer goes to the task.
    if (context.pausable) return { wait: { asks, state: { taskId: task.id, contextId: task.contextId } } };
    throw new ToolFailure(asks, { retryable: false });
  }
  throw new ToolFailure(`the remote task ${state.replace('TASK_STATE_', '').toLowerCase()}${said ? `: ${said.slice(0, 1000)}` : ''}`, { retryable: false });
}

export const a2aTool: ToolKind<A2aToolDefinition, A2aTool> = {
  type: 'a2a',
  expose: (tool) => [
    {
      name: tool.name,
      description: tool.description,
      parameters: { type: 'object', properties: { message: { type: 'string', description: 'What to ask the remote agent, in full: it sees nothing else of this conversation' } }, required: ['message'] },
      requireApproval: tool.requireApproval,
      ...(tool.policy ? { policy: tool.policy } : {}),
      async call(args, context) {
        try {
          return await ask(tool, args, context);
        } catch (error) {
          if (error instanceof AppError) throw error;
          throw new ToolFailure(`the remote agent at ${new URL(tool.card).host} failed: ${(error as Error).message}`);
        }
      },
    },
  ],
};
