import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ENDED_RUN_STATUSES, type RunRecord as Run } from '../store/runs';

/**
 * A run as an A2A task: the task's id is the run's, its context the run's session, its state the
 * run's status; the reply and its sources are its artifact. What a paused run waits on (a person's
 * approval) is its status message, with the pending calls as data.
 */
const STATES: Record<Run['status'], TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  in_progress: TaskState.TASK_STATE_WORKING,
  requires_action: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  expired: TaskState.TASK_STATE_FAILED,
};
/** A run waiting for the end user to connect an account is auth-required; for anything else, input-required. */
export const taskStateOf = (run: Pick<Run, 'status' | 'requiredActions'>): TaskState => (run.status === 'requires_action' && run.requiredActions?.length ? TaskState.TASK_STATE_AUTH_REQUIRED : STATES[run.status]);

/** The run statuses a task state stands for (a list filter). */
export const statusesOf = (state: TaskState): Array<Run['status']> =>
  state === TaskState.TASK_STATE_AUTH_REQUIRED ? ['requires_action'] : (Object.entries(STATES) as Array<[Run['status'], TaskState]>).filter(([, s]) => s === state).map(([status]) => status);

/** States after which a task changes no more, and the one it waits in for its client. */
export const isTerminal = (status: Run['status']) => ENDED_RUN_STATUSES.has(status);
export const isInterrupted = (status: Run['status']) => status === 'requires_action';

export const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' });
export const dataPart = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });

export function messageOf(run: Pick<Run, 'id' | 'sessionId'>, role: Role, messageId: string, parts: Part[]): Message {
  return { messageId, contextId: run.sessionId, taskId: run.id, role, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** The text a person or agent sent: its text parts, and any data part as JSON. */
export function textOf(message: Message): string {
  return message.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? JSON.stringify(p.content.value) : ''))
    .filter(Boolean)
    .join('\n')
    .trim();
}

/** What a paused run asks of its client: the end user to connect accounts, or a person's decision on each pending call. */
function waitingMessage(run: Run): Message {
  if (run.requiredActions?.length) {
    const list = run.requiredActions.map((a) => `${a.provider} at ${a.url}`).join('; ');
    return messageOf(run, Role.ROLE_AGENT, `${run.id}-auth-${run.seq}`, [
      textPart(`Waiting for the end user to connect their account: ${list}. The task goes on by itself once they have.`),
      dataPart({ requiredActions: run.requiredActions }),
    ]);
  }
  const pending = (run.round ?? []).map((c) => ({ id: c.id, tool: c.name, arguments: c.arguments ?? {} }));
  const list = pending.map((c) => `${c.tool} ${JSON.stringify(c.arguments)}`).join('; ');
  return messageOf(run, Role.ROLE_AGENT, `${run.id}-input-${run.seq}`, [
    textPart(`Waiting for a person to approve: ${list}. Reply on this task with "approve" or "reject" (all calls), or a data part {"approvals": [{"id": "<call id>", "approved": true|false, "reason": "…"}]}.`),
    dataPart({ pendingToolCalls: pending }),
  ]);
}

const replyMessage = (run: Run) => messageOf(run, Role.ROLE_AGENT, run.messageId ?? `${run.id}-reply`, [textPart(run.reply ?? '')]);

/** The reply, its sources and any structured output, as the task's one artifact. */
function replyArtifact(run: Run): Artifact {
  return {
    artifactId: `${run.id}-reply`,
    name: 'reply',
    description: '',
    parts: [textPart(run.reply ?? ''), ...(run.sources?.length ? [dataPart({ sources: run.sources })] : []), ...(run.output !== undefined ? [dataPart({ output: run.output })] : [])],
    metadata: undefined,
    extensions: [],
  };
}

export function statusMessageOf(run: Run): Message | undefined {
  if (run.status === 'completed') return replyMessage(run);
  if (run.status === 'requires_action') return waitingMessage(run);
  if (run.error) return messageOf(run, Role.ROLE_AGENT, `${run.id}-error`, [textPart(`${run.error.code}: ${run.error.message}`)]);
  return undefined;
}

export function taskOf(run: Run, options: { historyLength?: number; includeArtifacts?: boolean } = {}): Task {
  const asked = messageOf(run, Role.ROLE_USER, run.a2a?.messageId ?? `${run.id}-message`, [textPart(run.message)]);
  const history = [asked, ...(run.status === 'completed' ? [replyMessage(run)] : [])];
  const kept = options.historyLength === undefined ? history : options.historyLength <= 0 ? [] : history.slice(-options.historyLength);
  return {
    id: run.id,
    contextId: run.sessionId,
    status: { state: taskStateOf(run), message: statusMessageOf(run), timestamp: run.finishedAt ?? run.updatedAt },
    artifacts: run.status === 'completed' && options.includeArtifacts !== false ? [replyArtifact(run)] : [],
    history: kept,
    metadata: { cairn: { agentId: run.agentId, runId: run.id, usage: run.usage, ...(run.model ? { model: run.model } : {}), ...(run.agentVersion !== undefined ? { agentVersion: run.agentVersion } : {}) } },
  };
}

export { replyArtifact };
