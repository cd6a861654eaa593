import { createHmac } from 'node:crypto';
import { config } from '../config';
import { AppError, isRetryable, ValidationError } from '../errors';
import { errorFields, log } from '../log';
import { outboundRequest, urlRefusal } from '../net/outbound';
import type { StoredWebhook, WebhookEvent, WebhookInput, WebhookShown } from './webhook-schema';
import type { WebhookMessage } from '../queue/messages';
import type { Delivery } from '../queue/queue';
import type { Runtime, RuntimeWith } from '../runtime';
import type { SealedSecret } from '../secrets/secret-box';
import type { ExecutionRecord } from '../store/executions';
import type { DeliveryRecord } from '../store/webhook-deliveries';
import { scopeOf, type TenantScope } from '../tenancy';

/**
 * Completion webhooks: when an execution succeeds, fails, is canceled or waits for a person, Cairn
 * POSTs its summary to the workflow's (or the execute request's) URL, signed as Stripe signs:
 * `Cairn-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>`. Each
 * delivery goes through the webhooks queue, is retried with exponential backoff, and every attempt
 * is recorded; receivers get at-least-once, with `Cairn-Delivery-Id` to drop repeats. The URL goes
 * through the outbound guard like every tenant-given URL.
 */
/** Attempts in all before a delivery is given up. */
export const MAX_DELIVERY_ATTEMPTS = 8;

const sealContext = (scope: TenantScope) => ({ tenantId: scope.tenantId, tool: 'webhook', purpose: 'workflow-webhook' });

/** The webhook as stored: its secret sealed, or the one already stored kept. */
export async function sealWebhook(rt: Runtime, scope: TenantScope, input: WebhookInput, kept: StoredWebhook | undefined, path: string): Promise<StoredWebhook> {
  // Checked when written, so a refused address is a 400 now rather than failed deliveries later (each delivery checks again).
  const refusal = await urlRefusal(input.url, rt.outbound);
  if (refusal) throw new ValidationError(`${path}.url`, refusal);
  let sealed: SealedSecret;
  if (input.secret !== undefined) sealed = await rt.secrets.seal(input.secret, sealContext(scope));
  else if (kept) sealed = kept.sealed;
  else throw new ValidationError(`${path}.secret`, 'is required (no secret is stored for this webhook yet)');
  return { url: input.url, events: input.events, sealed };
}

/** A secret sealed as deliveries open it (an A2A push target's token or credentials). */
export const sealDeliverySecret = (rt: Runtime, scope: TenantScope, secret: string) => rt.secrets.seal(secret, sealContext(scope));

export const showWebhook = (webhook: Pick<StoredWebhook, 'url' | 'events'>): WebhookShown => ({ url: webhook.url, events: webhook.events, configured: true });

/** The signature of a body sent at `timestamp` (unix seconds): the HMAC-SHA256 of "<t>.<body>" (hooks check callers' with it too). */
export const signatureOf = (secret: string, timestamp: number, body: string): Buffer => createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();

/** The `Cairn-Signature` header of a body sent at `timestamp`. */
export const signatureHeader = (secret: string, timestamp: number, body: string) => `t=${timestamp},v1=${signatureOf(secret, timestamp, body).toString('hex')}`;

/** The execution as a delivery shows it: its state, and what a waiting execution waits for. */
function summaryOf(execution: ExecutionRecord) {
  const waiting = Object.values(execution.steps)
    .filter((s) => s.status === 'waiting')
    .map((s) => ({ stepId: s.id, request: { ...s.request!, ...(s.request?.expiresAt ? { expiresAt: new Date(s.request.expiresAt).toISOString() } : {}) } }));
  return {
    id: execution.id,
    workflowId: execution.workflowId,
    workflowVersion: execution.workflowVersion,
    status: execution.status,
    ...(execution.output !== undefined ? { output: execution.output } : {}),
    ...(execution.error ? { error: execution.error } : {}),
    ...(waiting.length > 0 ? { waiting } : {}),
    usage: execution.usage,
    startedAt: execution.startedAt,
    ...(execution.finishedAt ? { finishedAt: execution.finishedAt } : {}),
  };
}

/**
 * Records and sends a delivery of `event` when the execution's webhook asks for it. `key` tells
 * repeated events apart (each wait for a person is one); a delivery already recorded is not sent again.
 */
export async function notifyWebhook(rt: Runtime, scope: TenantScope, execution: ExecutionRecord, event: WebhookEvent, key: string = event): Promise<void> {
  const webhook = execution.webhook;
  if (!webhook?.events.includes(event)) return;
  await queueDelivery(rt, scope, { id: execution.id, workflowId: execution.workflowId }, { id: `${execution.id}.${key}`, key, event, url: webhook.url, status: 'pending', attempt: 0, attempts: [], createdAt: new Date(rt.clock.now()).toISOString() });
}

/**
 * Records a delivery once (`delivery.key` tells it apart from the owner's others) and queues its
 * first attempt. The owner's own state is settled by then: a delivery that could not be queued is
 * logged, never its owner's failure. `owner`: an execution, or a background run (workflow `-`).
 */
export async function queueDelivery(rt: Runtime, scope: TenantScope, owner: { id: string; workflowId: string }, delivery: DeliveryRecord): Promise<void> {
  try {
    const created = await rt.store.webhookDeliveries.createDelivery(scope, owner.id, delivery);
    if (created) await rt.queues.webhooks.send([{ type: 'deliver', tenantId: scope.tenantId, workflowId: owner.workflowId, executionId: owner.id, delivery: delivery.key }]);
  } catch (error) {
    log.error('webhook delivery not queued', { tenantId: scope.tenantId, ownerId: owner.id, event: delivery.event, ...errorFields(error) });
  }
}

/**
 * Records and sends a delivery that carries its own body (a background run's), signed with the
 * sealed secret given; `ownerId` (the run's id) keeps its deliveries apart, once per key.
 */
export async function notifyWith(rt: Runtime, scope: TenantScope, ownerId: string, webhook: { url: string; sealed: object }, event: string, payload: Record<string, unknown>): Promise<void> {
  const id = `${ownerId}.${event}`;
  const createdAt = new Date(rt.clock.now()).toISOString();
  const body = JSON.stringify({ id, event, createdAt, ...payload });
  await queueDelivery(rt, scope, { id: ownerId, workflowId: '-' }, { id, key: event, event, url: webhook.url, status: 'pending', attempt: 0, attempts: [], createdAt, body, sealed: webhook.sealed });
}

const backoffSeconds = (attempt: number) => Math.min(900, config.webhookRetryBaseSeconds * 2 ** (attempt - 1));

/** One attempt of one delivery; a failed attempt is retried through the queue until MAX_DELIVERY_ATTEMPTS. */
export async function deliverWebhook(rt: RuntimeWith<'queues' | 'secrets'>, message: WebhookMessage, _delivery?: Delivery): Promise<void> {
  const scope = scopeOf(message.tenantId);
  const claimed = await rt.store.webhookDeliveries.claimDelivery(scope, message.executionId, message.delivery, 30_000);
  if (!claimed) return; // delivered, given up, or being attempted
  // A delivery that carries its body and secret (a background run's) is sent as it is.
  const own = claimed.body !== undefined && (claimed.sealed || claimed.style === 'a2a') ? { webhook: { url: claimed.url, sealed: claimed.sealed }, body: claimed.body } : undefined;
  const execution = own ? undefined : await rt.store.executions.getExecution(scope, message.workflowId, message.executionId);
  const webhook = own?.webhook ?? execution?.webhook;
  const started = rt.clock.now();
  const record = (outcome: { status?: number; error?: string }) => ({ attempt: claimed.attempt, at: new Date(started).toISOString(), durationMs: rt.clock.now() - started, ...outcome });
  if (!webhook || (!own && !execution)) {
    await rt.store.webhookDeliveries.settleDelivery(scope, message.executionId, message.delivery, claimed.attempt, 'failed', record({ error: 'the execution or its webhook no longer exists' }));
    return;
  }
  let outcome: { status?: number; error?: string };
  let retryable = true;
  try {
    const secret = webhook.sealed ? await rt.secrets.open(webhook.sealed as SealedSecret, sealContext(scope)) : undefined;
    const body = own?.body ?? JSON.stringify({ id: claimed.id, event: claimed.event, createdAt: claimed.createdAt, execution: summaryOf(execution!) });
    const headers = claimed.style === 'a2a' ? a2aPushHeaders(secret) : { 'content-type': 'application/json', 'user-agent': 'Cairn-Webhooks/1', 'cairn-delivery-id': claimed.id, 'cairn-event': claimed.event, 'cairn-signature': signatureHeader(secret!, Math.floor(rt.clock.now() / 1000), body) };
    const response = await outboundRequest(
      webhook.url,
      {
        method: 'POST',
        headers,
        body,
        timeoutMs: 10_000,
        maxBytes: 4096,
        // A receiver's redirect is not followed: the signed body is for the URL configured.
        maxRedirects: 0,
      },
      rt.outbound,
    );
    outcome = response.status >= 200 && response.status < 300 ? { status: response.status } : { status: response.status, error: `answered ${response.status}: ${response.body.toString('utf8').slice(0, 200)}` };
  } catch (error) {
    outcome = { error: error instanceof AppError ? error.message : 'the delivery failed' };
    // A refused address or a URL that is not one will be refused again; a network error may pass.
    retryable = isRetryable(error);
  }
  if (!outcome.error) {
    await rt.store.webhookDeliveries.settleDelivery(scope, message.executionId, message.delivery, claimed.attempt, 'delivered', record(outcome));
    return;
  }
  const last = !retryable || claimed.attempt >= MAX_DELIVERY_ATTEMPTS;
  log.warn('webhook delivery failed', { tenantId: scope.tenantId, executionId: message.executionId, delivery: claimed.id, attempt: claimed.attempt, error: outcome.error, last });
  const settled = await rt.store.webhookDeliveries.settleDelivery(scope, message.executionId, message.delivery, claimed.attempt, last ? 'failed' : 'retrying', record(outcome));
  if (settled && !last) await rt.queues.webhooks.send([message], { delaySeconds: backoffSeconds(claimed.attempt) });
}

/** An A2A push notification's headers: its content type, and the client's token or credentials (sealed as `{name, value}`). */
function a2aPushHeaders(secret: string | undefined): Record<string, string> {
  const auth = secret ? (JSON.parse(secret) as { name: string; value: string }) : undefined;
  return { 'content-type': 'application/a2a+json', 'user-agent': 'Cairn-A2A/1', ...(auth ? { [auth.name]: auth.value } : {}) };
}

/** Deliveries as the API shows them. */
export const presentDelivery = ({ leaseUntil: _lease, ...delivery }: DeliveryRecord) => delivery;
