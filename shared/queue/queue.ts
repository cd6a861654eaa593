/**
 * One queue interface, two drivers: SQS (AWS, and tests against an SQS-compatible endpoint) and
 * an in-process queue for local mode. Delivery is at least once either way: consumers must be
 * idempotent.
 */
export interface Queue<M> {
  /** `delaySeconds` (≤ 900, SQS's limit) holds the messages back before they can be received. */
  send(messages: M[], options?: { delaySeconds?: number }): Promise<void>;
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
  return {
    send: async () => {
      throw new Error(`No queue: set ${variable}`);
    },
  };
}
