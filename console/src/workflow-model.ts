/** What the console knows of workflows and executions (as the API returns them), and how a step is drawn. */
import type { GraphStep } from './components/step-edges';
import type { Execution, ExecutionStep, Workflow, WorkflowStep } from './contract';
import { jsonOf } from './json-input';

export type { Execution, ExecutionStep, Workflow };
/** A step as the API returns it (one of the kinds: each has `id`, `type` and its own fields). */
export type StoredStep = WorkflowStep;

export const FINISHED = new Set(['succeeded', 'failed', 'canceled']);

export interface StepDraft {
  id: string;
  type: string;
  dependsOn: string;
  /** Everything else of the step (its config, when, retry…) as JSON. */
  body: string;
  parseError?: string;
}

/** A stored step as the editor shows it: id, type and dependsOn apart, the rest as JSON. */
export function draftOf(step: StoredStep): StepDraft {
  const { id, type, dependsOn, config, ...rest } = step;
  return { id, type, dependsOn: (dependsOn ?? []).join(', '), body: JSON.stringify({ ...(config ?? {}), ...rest }, null, 2) };
}

/** The steps a draft names in its "depends on" box; undefined when the box is empty (the previous step). */
export function dependsOnOf(d: StepDraft): string[] | undefined {
  return d.dependsOn.trim() ? d.dependsOn.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
}

/** What the graph draws of a step being edited (its branches once its JSON parses). */
export function graphStepOf(d: StepDraft): GraphStep {
  // Drawn without its branches until its JSON parses to an object.
  const parsed = jsonOf(d.body);
  const body = 'value' in parsed && parsed.value && typeof parsed.value === 'object' ? (parsed.value as Record<string, unknown>) : {};
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : undefined);
  const dependsOn = dependsOnOf(d);
  return {
    id: d.id,
    type: d.type,
    ...(dependsOn ? { dependsOn } : {}),
    ...(body.when ? { when: body.when as GraphStep['when'] } : {}),
    then: list(body.then),
    else: list(body.else),
    inner: Array.isArray(body.steps) ? body.steps.length : undefined,
  };
}

export const graphOfExecution = (wf: Workflow | undefined, exe: Execution): GraphStep[] =>
  exe.steps.map((s) => {
    const def = wf?.steps.find((d) => d.id === s.id);
    return { ...(def ? graphStepOf(draftOf(def)) : { id: s.id, type: s.type }), status: s.status };
  });
