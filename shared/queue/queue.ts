import { withLogContext } from '../log';
import { emitMetrics } from '../metrics';
import { withCarrier } from '../telemetry';

/**
 * One queue interface, two drivers: SQS (AWS, and tests against an SQS-compatible endpoint) and
 * an in-process queue for local mode. Delivery is at least once either way: consumers must be
 * idempotent.
 */
export interface Queue<M> {
  /** `delaySeconds` (≤ 900, SQS's limit) holds the messages back before they can be received. */
  send(messages: M[], options?: { delaySeconds?: number }): Promise<void>;
  /**
   * Messages the queue holds — waiting, delayed or in a consumer's hands (SQS's approximate counts):
   * while there are any, work waiting for a message may be queued behind them, not lost.
   */
  pending(): Promise<number>;
}

/** What a consumer learns about a delivery besides the message. */
export interface Delivery {
  /** 1 on the first delivery. */
  receiveCount: number;
  /** Deliveries after which the message goes to the dead-letter queue. */
  maxReceives: number;
}

export type Consumer<M> = (message: M, delivery: Delivery) => Promise<void>;

/** Redeliveries before a message is dead-lettered; the CDK queues use the same number. */
export const MAX_RECEIVES = 5;

/** A queue this process was not given: sending to it says which variable is missing. */
export function unconfiguredQueue<M>(variable: string): Queue<M> {
  const missing = async (): Promise<never> => {
    throw new Error(`No queue: set ${variable}`);
  };
  return { send: missing, pending: missing };
}

/**
 * Hands one delivered message to its consumer, as both drivers do: in the trace its sender named,
 * with its id and tenant on every log line the work writes, counted in the metrics (messages,
 * failures, time). A body that is not JSON is the consumer's failure like any other.
 */
export async function deliver<M>(consumer: Consumer<M>, body: string, delivery: Delivery, meta: { messageId: string; carrier?: Record<string, string> }): Promise<void> {
  const started = performance.now();
  let failed = true;
  try {
    await withCarrier(meta.carrier, () => {
      const message = JSON.parse(body) as M;
      const tenantId = (message as { tenantId?: unknown }).tenantId;
      return withLogContext({ messageId: meta.messageId, ...(typeof tenantId === 'string' ? { tenantId } : {}) }, () => consumer(message, delivery));
    });
    failed = false;
  } finally {
    emitMetrics({}, { Messages: { value: 1, unit: 'count' }, MessageFailures: { value: failed ? 1 : 0, unit: 'count' }, MessageLatency: { value: performance.now() - started, unit: 'ms' } });
  }
}
