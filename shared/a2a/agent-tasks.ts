import { randomUUID } from 'node:crypto';
import type { AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { ExtendedAgentCardNotConfiguredError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { approveRun, cancelRun, createRun, getRun, isInterrupted, isTerminal, listRuns, nextRunChange, replyArtifact, statusesOf, taskOf, taskStateOf, textOf, type Agent, type Run } from '../agents';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../errors';
import { isId, SESSION_ID } from '../ids';
import { urlRefusal } from '../net/outbound';
import type { Runtime } from '../runtime';
import { sealDeliverySecret } from '../workflows';
import type { TenantScope } from '../tenancy';
import { turnUser, type EndUser } from '../identity';
import { agentCardOf } from './agent-card';

/** How long a blocking send waits for its task to end or ask for input before answering with it as it stands. */
export const BLOCKING_MS = 5 * 60_000;
/** How long one stream follows its task (resubscribe for longer). */
export const STREAM_MS = 15 * 60_000;
const MAX_PUSH_CONFIGS = 10;

export interface AgentTasksContext {
  rt: Runtime;
  scope: TenantScope;
  agent: Agent;
  keyId: string;
  /** The end user the caller's token names (X-End-User-Token): the tasks started act for them. */
  user?: EndUser;
  /** Where an OAuth provider sends the end user back to (a task waiting for them to connect an account). */
  callbackUrl?: string;
  /** The agent's A2A endpoint, as clients reach it. */
  endpoint: string;
  /** The caller went away. */
  signal?: AbortSignal;
}

/**
 * An agent's A2A endpoint over its background runs: a task is a run (its id, its session as the
 * context, its status as the state), so what the runs engine gives — durable steps, approvals,
 * cancel, events, webhooks — is what a task has. Cairn's errors become the protocol's.
 */
export class AgentTasks implements A2ARequestHandler {
  constructor(private readonly c: AgentTasksContext) {}

  async getAgentCard(): Promise<AgentCard> {
    return agentCardOf(this.c.agent, this.c.endpoint);
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError('This agent has no extended card: its public card is all there is');
  }

  sendMessage(params: SendMessageRequest): Promise<Task> {
    return protocolErrors(async () => {
      const run = await this.start(params);
      const settled = params.configuration?.returnImmediately ? run : await this.settled(run);
      return taskOf(settled, { historyLength: params.configuration?.historyLength });
    });
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const run = await protocolErrors(() => this.start(params));
    yield { payload: { $case: 'task', value: taskOf(run) } };
    yield* this.follow(run, taskStateOf(run));
  }

  getTask(params: GetTaskRequest): Promise<Task> {
    return protocolErrors(async () => taskOf(await this.run(params.id), { historyLength: params.historyLength }));
  }

  listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    return protocolErrors(async () => {
      const refused = listRefusal(params);
      if (refused) throw new RequestMalformedError(refused);
      const statuses = params.status ? statusesOf(params.status) : undefined;
      const limit = params.pageSize ?? DEFAULT_PAGE_SIZE;
      // Only the caller's end user's tasks (or, without one, the tasks of no end user).
      const page = await listRuns(this.c.rt, this.c.scope, this.c.agent.id, { limit, userId: this.c.user?.id ?? null, ...(params.pageToken ? { cursor: params.pageToken } : {}), ...(statuses?.length === 1 ? { status: statuses[0] } : {}), ...(params.contextId ? { sessionId: params.contextId } : {}) });
      const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
      const tasks = page.items
        .filter((run) => (!statuses || statuses.includes(run.status)) && (after === undefined || Date.parse(run.finishedAt ?? run.updatedAt) > after))
        .map((run) => taskOf(run, { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts }));
      return { tasks, nextPageToken: page.nextCursor ?? '', pageSize: tasks.length, totalSize: tasks.length };
    });
  }

  cancelTask(params: CancelTaskRequest): Promise<Task> {
    return protocolErrors(async () => {
      const run = await this.run(params.id);
      try {
        return taskOf(await cancelRun(this.c.rt, this.c.scope, this.c.agent.id, run.id));
      } catch (error) {
        if (error instanceof ConflictError) throw new TaskNotCancelableError(`Task ${run.id} has already ended (${run.status})`);
        throw error;
      }
    });
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const run = await protocolErrors(() => this.run(params.id));
    yield { payload: { $case: 'task', value: taskOf(run) } };
    yield* this.follow(run, taskStateOf(run));
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    return protocolErrors(async () => {
      const run = await this.run(params.taskId);
      const target = await this.pushTarget(params);
      const others = (run.push ?? []).filter((p) => p.id !== target.id);
      if (others.length >= MAX_PUSH_CONFIGS) throw new RequestMalformedError(`A task takes at most ${MAX_PUSH_CONFIGS} push notification configs`);
      await this.c.rt.store.runs.setPush(this.c.scope, run, [...others, target]);
      return shownPush(run.id, target);
    });
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    return protocolErrors(async () => {
      const run = await this.run(params.taskId);
      const found = (run.push ?? []).find((p) => p.id === params.id);
      if (!found) throw new TaskNotFoundError(`Task ${run.id} has no push notification config ${params.id}`);
      return shownPush(run.id, found);
    });
  }

  listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    return protocolErrors(async () => {
      const run = await this.run(params.taskId);
      return { configs: (run.push ?? []).map((p) => shownPush(run.id, p)), nextPageToken: '' };
    });
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return protocolErrors(async () => {
      const run = await this.run(params.taskId);
      if (!(run.push ?? []).some((p) => p.id === params.id)) throw new TaskNotFoundError(`Task ${run.id} has no push notification config ${params.id}`);
      await this.c.rt.store.runs.setPush(this.c.scope, run, (run.push ?? []).filter((p) => p.id !== params.id));
    });
  }

  /**
   * A task of this agent started for the caller's end user (or for none, as the caller), or the
   * protocol's task-not-found: another tenant's, another agent's, another end user's, or none.
   */
  private async run(taskId: string): Promise<Run> {
    const notFound = () => new TaskNotFoundError(`Task ${taskId} not found`);
    let run: Run;
    try {
      run = await getRun(this.c.rt, this.c.scope, this.c.agent.id, taskId);
    } catch (error) {
      if (error instanceof NotFoundError) throw notFound();
      throw error;
    }
    if ((run.userId ?? null) !== (this.c.user?.id ?? null)) throw notFound();
    return run;
  }

  /**
   * A context a client names: one of this agent's sessions with the caller's end user, or a new
   * one under the id the client chose. Another end user's context is refused, and so is an id of
   * Cairn's own making (`ses_…`) this agent did not give: another agent's.
   */
  private async context(contextId: string, field: string): Promise<string> {
    if (!SESSION_ID.test(contextId)) throw new RequestMalformedError(`${field} must be 1–128 letters, digits, _ or -`);
    const { rt, scope, agent, user } = this.c;
    const anotherUser = () => new RequestMalformedError(`${field} ${contextId} belongs to another end user: leave it out to start a new one`);
    if (isId('session', contextId)) {
      const session = await rt.store.sessions.getSession(scope, agent.id, contextId);
      if (!session) throw new RequestMalformedError(`${field} ${contextId} is not a context of this agent: leave it out to start a new one`);
      if ((session.userId ?? null) !== (user?.id ?? null)) throw anotherUser();
      return contextId;
    }
    // An id the client chose is claimed for its end user now, before the first task in it has written anything.
    if (!(await rt.store.sessions.claimSession(scope, agent.id, contextId, user?.id ?? null))) throw anotherUser();
    return contextId;
  }

  /**
   * What a message does: a new task (a run in its context, or in a new one), or, naming a task
   * that waits for input, a person's decision on the calls it waits on.
   */
  private async start(params: SendMessageRequest): Promise<Run> {
    const { rt, scope, agent } = this.c;
    const message = params.message;
    if (!message) throw new RequestMalformedError('message is required');
    if (message.taskId) return this.answer(message);
    const text = textOf(message);
    if (!text) throw new RequestMalformedError('message.parts must hold some text');
    if (message.contextId) await this.context(message.contextId, 'message.contextId');
    const pushConfig = params.configuration?.taskPushNotificationConfig;
    const push = pushConfig?.url ? [await this.pushTarget(pushConfig)] : undefined;
    return createRun(rt, scope, agent.id, {
      converse: { message: text, ...(message.contextId ? { sessionId: message.contextId } : {}), keyId: this.c.keyId, ...turnUser(this.c.user), ...(this.c.callbackUrl ? { callbackUrl: this.c.callbackUrl } : {}), ...(agent.a2a?.alias ? { target: { alias: agent.a2a.alias } } : {}) },
      maxToolSteps: 20,
      maxDurationSeconds: 900,
      a2a: { messageId: message.messageId || randomUUID() },
      ...(push ? { push } : {}),
    });
  }

  /** A reply to a task waiting for input: "approve" / "reject" for every pending call, or a data part of approvals by call id. */
  private async answer(message: Message): Promise<Run> {
    const run = await this.run(message.taskId);
    if (run.status !== 'requires_action') throw new UnsupportedOperationError(`Task ${run.id} is not waiting for input (${TaskState[taskStateOf(run)]}): send a message without taskId to start another in its context`);
    const pending = run.round ?? [];
    const data = message.parts.find((p) => p.content?.$case === 'data')?.content?.value as { approvals?: unknown } | undefined;
    let approvals: Array<{ id: string; approved: boolean; reason?: string }>;
    if (data && Array.isArray(data.approvals)) {
      approvals = data.approvals.map((a: { id?: unknown; approved?: unknown; reason?: unknown }, i: number) => {
        if (typeof a.id !== 'string' || typeof a.approved !== 'boolean') throw new RequestMalformedError(`approvals[${i}] must have an id (string) and approved (boolean)`);
        return { id: a.id, approved: a.approved, ...(typeof a.reason === 'string' ? { reason: a.reason } : {}) };
      });
    } else {
      const said = textOf(message).toLowerCase();
      const approved = /^(approve|approved|yes|ok|allow)\b/.test(said) ? true : /^(reject|rejected|no|deny|denied)\b/.test(said) ? false : undefined;
      if (approved === undefined) throw new RequestMalformedError('A task waiting for approval takes "approve" or "reject", or a data part {"approvals": [{"id", "approved", "reason"}]}');
      approvals = pending.map((c) => ({ id: c.id, approved, ...(approved ? {} : { reason: textOf(message).slice(0, 500) }) }));
    }
    return approveRun(this.c.rt, this.c.scope, this.c.agent.id, run.id, approvals);
  }

  /** The run as it changes, this state first, until it ends or asks for input, the caller goes away or `maxMs` passes. */
  private async *states(run: Run, maxMs: number): AsyncGenerator<Run, void, undefined> {
    const until = this.c.rt.clock.now() + maxMs;
    for (let current = run; ; ) {
      yield current;
      if (isTerminal(current.status) || isInterrupted(current.status) || this.c.signal?.aborted || this.c.rt.clock.now() >= until) return;
      await nextRunChange(this.c.rt, current.id, Math.min(1000, until - this.c.rt.clock.now()));
      current = await this.run(current.id);
    }
  }

  /** The run once it has ended or asks for input, or as it stands when the wait is over. */
  private async settled(run: Run): Promise<Run> {
    let last = run;
    for await (const current of this.states(run, BLOCKING_MS)) last = current;
    return last;
  }

  /** The task's changes, from the state a client has been sent, until it ends or asks for input: the reply as an artifact, each new state as a status update. */
  private async *follow(run: Run, sent: TaskState): AsyncGenerator<StreamResponse, void, undefined> {
    for await (const current of this.states(run, STREAM_MS)) {
      const state = taskStateOf(current);
      // A task seen submitted and then done has worked in between: its client hears so, in order.
      if (sent === TaskState.TASK_STATE_SUBMITTED && state !== sent && state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_CANCELED) {
        yield { payload: { $case: 'statusUpdate', value: { taskId: current.id, contextId: current.sessionId, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: current.startedAt ?? current.updatedAt }, metadata: undefined } } };
        sent = TaskState.TASK_STATE_WORKING;
      }
      if (state !== sent) {
        if (current.status === 'completed') yield { payload: { $case: 'artifactUpdate', value: { taskId: current.id, contextId: current.sessionId, artifact: replyArtifact(current), append: false, lastChunk: true, metadata: undefined } } };
        yield { payload: { $case: 'statusUpdate', value: { taskId: current.id, contextId: current.sessionId, status: taskOf(current).status, metadata: undefined } } };
        sent = state;
      }
    }
  }

  /** A push target as stored: its URL checked by the outbound guard now (and again on each push), its token or credentials sealed. */
  private async pushTarget(config: TaskPushNotificationConfig): Promise<NonNullable<Run['push']>[number]> {
    const refusal = await urlRefusal(config.url, this.c.rt.outbound);
    if (refusal) throw new RequestMalformedError(`url ${refusal}`);
    const auth = config.authentication?.scheme && config.authentication.credentials ? { name: 'authorization', value: `${config.authentication.scheme} ${config.authentication.credentials}` } : config.token ? { name: 'x-a2a-notification-token', value: config.token } : undefined;
    const sealed = auth ? await sealDeliverySecret(this.c.rt, this.c.scope, JSON.stringify(auth)) : undefined;
    return { id: config.id || randomUUID(), url: config.url, ...(sealed ? { sealed } : {}), ...(config.authentication?.scheme ? { scheme: config.authentication.scheme } : {}) };
  }
}

const DEFAULT_PAGE_SIZE = 50;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const MAX_PAGE_SIZE = 100;

/** Why ListTasks' parameters cannot be served (each named), or undefined. */
function listRefusal(params: ListTasksRequest): string | undefined {
  if (params.status === TaskState.UNRECOGNIZED) return 'status must be one of the protocol’s task states (TASK_STATE_…)';
  if (params.pageSize !== undefined && !(Number.isInteger(params.pageSize) && params.pageSize >= 1 && params.pageSize <= MAX_PAGE_SIZE)) return `pageSize must be a whole number from 1 to ${MAX_PAGE_SIZE}`;
  if (params.historyLength !== undefined && !(Number.isInteger(params.historyLength) && params.historyLength >= 0)) return 'historyLength must be a whole number, 0 or more';
  if (params.statusTimestampAfter !== undefined && params.statusTimestampAfter !== '' && !(RFC3339.test(params.statusTimestampAfter) && !Number.isNaN(Date.parse(params.statusTimestampAfter)))) return 'statusTimestampAfter must be an RFC 3339 timestamp';
  if (params.contextId && !SESSION_ID.test(params.contextId)) return 'contextId must be 1–128 letters, digits, _ or -';
  return undefined;
}

/** A push target as the protocol shows it: never its token or credentials. */
const shownPush = (taskId: string, p: NonNullable<Run['push']>[number]): TaskPushNotificationConfig => ({
  tenant: '',
  id: p.id,
  taskId,
  url: p.url,
  token: '',
  authentication: p.scheme ? { scheme: p.scheme, credentials: '' } : undefined,
});

/** Cairn's errors as the protocol's: a field refused is invalid params, a state that forbids it an unsupported operation. */
async function protocolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ValidationError) throw new RequestMalformedError(error.message);
    if (error instanceof NotFoundError) throw new RequestMalformedError(error.message);
    if (error instanceof ConflictError) throw new UnsupportedOperationError(error.message);
    if (error instanceof AppError && error.statusCode < 500) throw new RequestMalformedError(error.message);
    throw error;
  }
}
