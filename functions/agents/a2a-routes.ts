import type { OpenAPIHono } from '@hono/zod-openapi';
import { AgentCard, CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig, TaskState, taskStateFromJSON } from '@a2a-js/sdk';
import { restStatusFor, toRestErrorBody } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { AgentTasks } from '../../shared/a2a/agent-tasks';
import { A2A_VERSION, agentCardOf } from '../../shared/a2a/agent-card';
import { agents, type Agent } from '../../shared/agents';
import { AppError, NotFoundError } from '../../shared/errors';
import type { AppEnv } from '../../shared/http/context';
import { requestEndUser } from '../../shared/http/end-user';
import { oauthCallbackUrl, publicBaseUrl } from '../../shared/http/public-url';
import { isId } from '../../shared/ids';
import { assertStorableJson } from '../../shared/json-guard';
import type { Runtime } from '../../shared/runtime';

/**
 * The Agent2Agent protocol (1.0) at `/a2a/{agentId}`, for agents published with `a2a.enabled`:
 * the card (read without a key), JSON-RPC at the endpoint itself and HTTP+JSON below it, both over
 * the same tasks (shared/a2a/agent-tasks.ts: a task is a background run). The official SDK's
 * JSON-RPC transport parses and shapes each call; the HTTP+JSON paths are mapped here.
 */
const CARD = '/.well-known/agent-card.json';
const notPublished = (agentId: string) => new NotFoundError('A2A agent', agentId);

/** The endpoint as clients reach it: behind API Gateway, its stage is part of the path. */
function endpointOf(c: Context<AppEnv>, agentId: string): string {
  return `${publicBaseUrl(c)}/a2a/${agentId}`;
}

/** The tenant's agent, published over A2A; anything else (unpublished, another tenant's, none) is a 404. */
async function publishedAgent(rt: Runtime, c: Context<AppEnv>, agentId: string): Promise<Agent> {
  const agent = isId('agent', agentId) ? await agents.find(rt, c.get('identity').scope, agentId) : undefined;
  if (!agent?.a2a?.enabled) throw notPublished(agentId);
  return agent;
}

/** A request names the protocol version it speaks (A2A-Version); without one it is taken to speak ours. */
function versionRefusal(c: Context<AppEnv>): string | undefined {
  const asked = c.req.header('a2a-version');
  return asked && asked !== A2A_VERSION ? `A2A version ${asked} is not supported; this server speaks ${A2A_VERSION}` : undefined;
}

const sse = (c: Context<AppEnv>, events: AsyncGenerator<unknown, void, undefined>, shape: (error: unknown) => unknown) =>
  streamSSE(c, async (stream) => {
    try {
      for await (const event of events) await stream.writeSSE({ data: JSON.stringify(event) });
    } catch (error) {
      await stream.writeSSE({ event: 'error', data: JSON.stringify(shape(error)) });
    }
  });

const restError = (c: Context<AppEnv>, error: unknown) => {
  const status = restStatusFor(error);
  return c.json(toRestErrorBody(error, status), status as ContentfulStatusCode);
};

/** An HTTP+JSON call: `message:send`, `message:stream`, `tasks`, `tasks/{id}`, `tasks/{id}:cancel`, `tasks/{id}:subscribe`, `tasks/{id}/pushNotificationConfigs[/{configId}]`. */
async function restCall(c: Context<AppEnv>, tasks: AgentTasks, path: string): Promise<Response> {
  const method = c.req.method;
  const body = async () => (await c.req.json().catch(() => ({}))) as Record<string, unknown>;
  const task = /^tasks\/([^/:]+)(?::(cancel|subscribe))?$/.exec(path);
  const push = /^tasks\/([^/:]+)\/pushNotificationConfigs(?:\/([^/]+))?$/.exec(path);
  try {
    if (path === 'message:send' && method === 'POST') {
      const sent = await tasks.sendMessage(SendMessageRequest.fromJSON(await body()));
      return c.json(SendMessageResponse.toJSON({ payload: { $case: 'task', value: sent } }) as object);
    }
    if (path === 'message:stream' && method === 'POST') {
      const events = tasks.sendMessageStream(SendMessageRequest.fromJSON(await body()));
      return sse(c, mapped(events, (e) => StreamResponse.toJSON(e)), (error) => toRestErrorBody(error, restStatusFor(error)));
    }
    if (path === 'tasks' && method === 'GET') {
      const q = c.req.query();
      const listed = await tasks.listTasks({
        tenant: '',
        contextId: q.contextId ?? '',
        status: q.status ? taskStateFromJSON(q.status) : TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: q.pageToken ?? '',
        statusTimestampAfter: q.statusTimestampAfter,
        ...(q.pageSize ? { pageSize: Number(q.pageSize) } : {}),
        ...(q.historyLength ? { historyLength: Number(q.historyLength) } : {}),
        ...(q.includeArtifacts ? { includeArtifacts: q.includeArtifacts === 'true' } : {}),
      });
      return c.json(ListTasksResponse.toJSON(listed) as object);
    }
    if (task && !task[2] && method === 'GET') {
      const historyLength = c.req.query('historyLength');
      return c.json(Task.toJSON(await tasks.getTask(GetTaskRequest.fromJSON({ id: task[1], ...(historyLength ? { historyLength: Number(historyLength) } : {}) }))) as object);
    }
    if (task?.[2] === 'cancel' && method === 'POST') return c.json(Task.toJSON(await tasks.cancelTask(CancelTaskRequest.fromJSON({ id: task[1] }))) as object);
    if (task?.[2] === 'subscribe' && (method === 'POST' || method === 'GET')) {
      return sse(c, mapped(tasks.resubscribe({ tenant: '', id: task[1]! }), (e) => StreamResponse.toJSON(e)), (error) => toRestErrorBody(error, restStatusFor(error)));
    }
    if (push && !push[2] && method === 'POST') {
      const created = await tasks.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ ...(await body()), taskId: push[1] }));
      return c.json(TaskPushNotificationConfig.toJSON(created) as object);
    }
    if (push && !push[2] && method === 'GET') return c.json(ListTaskPushNotificationConfigsResponse.toJSON(await tasks.listTaskPushNotificationConfigs({ tenant: '', taskId: push[1]!, pageSize: 0, pageToken: '' })) as object);
    if (push?.[2] && method === 'GET') return c.json(TaskPushNotificationConfig.toJSON(await tasks.getTaskPushNotificationConfig({ tenant: '', taskId: push[1]!, id: push[2] })) as object);
    if (push?.[2] && method === 'DELETE') {
      await tasks.deleteTaskPushNotificationConfig({ tenant: '', taskId: push[1]!, id: push[2] });
      return c.body(null, 204);
    }
    if (path === 'extendedAgentCard' && method === 'GET') return c.json(AgentCard.toJSON(await tasks.getAuthenticatedExtendedAgentCard()) as object);
  } catch (error) {
    if (error instanceof AppError) throw error;
    return restError(c, error);
  }
  throw new AppError('NOT_FOUND', `No A2A operation at ${method} ${path}`, { method, path });
}

/** Why a JSON value is not a JSON-RPC 2.0 request object (JSON-RPC's -32600), or undefined. */
function invalidRequest(request: unknown): string | undefined {
  if (!request || typeof request !== 'object' || Array.isArray(request)) return 'the body must be one JSON-RPC request object';
  const { jsonrpc, method, id } = request as Record<string, unknown>;
  if (jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof method !== 'string' || method === '') return 'method must be a string';
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') return 'id must be a string, a number or null';
  return undefined;
}

/** Why a parsed body breaks the one rule for JSON from outside (depth, numbers, reserved keys), or undefined. */
function unstorable(request: unknown): string | undefined {
  try {
    assertStorableJson(request);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The request's id where it has a usable one (an error answers it), else null. */
const idOf = (request: unknown): string | number | null => {
  const id = request && typeof request === 'object' ? (request as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

async function* mapped<T>(events: AsyncGenerator<T, void, undefined>, shape: (event: T) => unknown): AsyncGenerator<unknown, void, undefined> {
  for await (const event of events) yield shape(event);
}

export function registerA2aRoutes(routes: OpenAPIHono<AppEnv>, rt: Runtime) {
  // Read without a key (a2a-auth.ts found the tenant from the agent's id).
  const card = async (c: Context<AppEnv>) => {
    const agentId = c.req.param('agentId')!;
    const agent = await publishedAgent(rt, c, agentId);
    c.header('cache-control', 'public, max-age=60');
    return c.json(AgentCard.toJSON(agentCardOf(agent, endpointOf(c, agentId))) as object);
  };
  routes.get(`/a2a/:agentId${CARD}`, card);

  const tasksOf = async (c: Context<AppEnv>) => {
    const agentId = c.req.param('agentId')!;
    const agent = await publishedAgent(rt, c, agentId);
    // An A2A client names the end user only by their token: the tasks it starts act for that user.
    const user = await requestEndUser(c, rt);
    return new AgentTasks({ rt, scope: c.get('identity').scope, agent, keyId: c.get('identity').keyId, ...(user ? { user } : {}), callbackUrl: oauthCallbackUrl(c), endpoint: endpointOf(c, agentId), signal: c.req.raw.signal });
  };

  // JSON-RPC 2.0: every method at the endpoint itself.
  routes.post('/a2a/:agentId', async (c) => {
    const tasks = await tasksOf(c);
    const refused = versionRefusal(c);
    if (refused) return c.json({ jsonrpc: '2.0', id: null, error: { code: -32009, message: refused } });
    let request: unknown;
    try {
      request = JSON.parse(await c.req.text());
    } catch {
      return c.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } });
    }
    const invalid = invalidRequest(request) ?? unstorable(request);
    if (invalid) return c.json({ jsonrpc: '2.0', id: idOf(request), error: { code: -32600, message: `Invalid Request: ${invalid}` } });
    const answered = await new JsonRpcTransportHandler(tasks).handle(request as Record<string, unknown>, new ServerCallContext({ requestedVersion: A2A_VERSION }));
    if (Symbol.asyncIterator in answered) {
      const id = (request as { id?: string | number | null }).id ?? null;
      return sse(c, answered, (error) => ({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
    }
    return c.json(answered as object);
  });

  // HTTP+JSON: the operations as paths below the endpoint.
  routes.all('/a2a/:agentId/*', async (c) => {
    // The card, looked for below the agent (a client resolving it against the card's own URL).
    if (c.req.method === 'GET' && c.req.path.endsWith(CARD)) return card(c);
    const tasks = await tasksOf(c);
    const refused = versionRefusal(c);
    if (refused) return c.json({ error: { code: 400, status: 'INVALID_ARGUMENT', message: refused, details: [] } }, 400);
    const prefix = `/a2a/${c.req.param('agentId')}/`;
    return restCall(c, tasks, decodeURIComponent(c.req.path.slice(c.req.path.indexOf(prefix) + prefix.length)));
  });
}
