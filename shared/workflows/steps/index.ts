import { condition } from './condition';
import { human } from './human';
import { map } from './map';
import type { StepKind } from './step-kind';
import { WORK_KINDS } from './step-schema';

/** Every kind of workflow step, by type: the ones that do work, and the ones that steer. */
export const STEP_KINDS = { ...WORK_KINDS, condition, map, human } as const satisfies Record<string, StepKind>;

export type StepType = keyof typeof STEP_KINDS;
export const STEP_TYPES = Object.keys(STEP_KINDS) as StepType[];

export function stepKind(type: string): StepKind | undefined {
  return Object.hasOwn(STEP_KINDS, type) ? STEP_KINDS[type as StepType] : undefined;
}
