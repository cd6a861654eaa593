import { classification } from './classification';
import { generation } from './generation';
import { search } from './search';
import type { StepKind } from './step-kind';

/** Every kind of workflow step, by type. */
export const STEP_KINDS = { classification, search, generation } as const satisfies Record<string, StepKind>;

export type StepType = keyof typeof STEP_KINDS;
export const STEP_TYPES = Object.keys(STEP_KINDS) as StepType[];

export function stepKind(type: string): StepKind | undefined {
  return Object.hasOwn(STEP_KINDS, type) ? (STEP_KINDS[type as StepType]) : undefined;
}
