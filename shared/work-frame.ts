import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What travels with one piece of work (a request, a queued message) through its awaits: its log
 * fields, the DynamoDB counters it adds to, the searches it bills and, locally, its trace
 * context, each in a slot of its own module's. One AsyncLocalStorage holds them all because each
 * storage costs on every promise the process creates (Node 20 copies every storage's value into
 * each new promise): with the four there were, a promise cost about five times what it costs
 * with none; with one, about two and a half.
 */
export interface FrameSlot<T> {
  readonly key: symbol;
  /** Never set: carries the slot's value type. */
  readonly type?: T;
}

type Frame = Readonly<Record<symbol, unknown>>;
const storage = new AsyncLocalStorage<Frame>();

export function frameSlot<T>(name: string): FrameSlot<T> {
  return { key: Symbol(name) };
}

/** The slot's value in the current frame (undefined outside any work, or where it was never set). */
export function slotValue<T>(slot: FrameSlot<T>): T | undefined {
  return storage.getStore()?.[slot.key] as T | undefined;
}

/** Runs `fn` in a frame that is the current one with the slot set to `value`. */
export function withSlot<T, R>(slot: FrameSlot<T>, value: T, fn: () => R): R {
  return storage.run({ ...storage.getStore(), [slot.key]: value }, fn);
}

/** Runs `fn` as work of its own, outside the current one (a queued message taken at once by the process that sent it). */
export function detached<R>(fn: () => R): R {
  return storage.run({}, fn);
}
