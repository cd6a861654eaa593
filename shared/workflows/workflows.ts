import type { Precondition } from '../collection';
import type { Idempotency, Reference } from '../store/records';
import type { TenantScope } from '../tenancy';
import { ValidationError } from '../errors';
import { stepKind } from './steps';
import type { StepLike } from './steps/step-kind';
import { compileWorkflow } from './compiler';
import { sealWebhook, showWebhook } from './webhooks';
import { withoutReadOnly } from '../read-only';
import { workflowInput, type Workflow, type WorkflowInput } from './workflow-schema';
import { parseInput } from '../validation';
import type { Runtime } from '../runtime';

import { storedWorkflow, workflows, type StoredWorkflow } from './workflow-records';

export { storedWorkflow, workflows } from './workflow-records';

type StoredStep = StoredWorkflow['steps'][number];

type WorkflowFields = Omit<StoredWorkflow, 'id' | 'createdAt' | 'updatedAt' | 'version'>;

/**
 * Gives every step a stable id: its own, else `step<n>` by position, skipping ids that other
 * steps already claim.
 */
export function assignStepIds(steps: WorkflowInput['steps']): Workflow['steps'] {
  const taken = new Set(steps.map((s) => s.id).filter((id): id is string => Boolean(id)));
  return steps.map((step, index) => {
    if (step.id) return step as Workflow['steps'][number];
    let n = index + 1;
    while (taken.has(`step${n}`)) n++;
    taken.add(`step${n}`);
    return { ...step, id: `step${n}` };
  });
}

/** Every step with the field path of its config: the workflow's, and the steps nested in them (a map's). */
function eachStep(steps: StepLike[], path = 'steps'): Array<{ step: StepLike; path: string }> {
  return steps.flatMap((step, i) => {
    const nested = stepKind(step.type)?.nested;
    return [{ step, path: `${path}[${i}]` }, ...(nested ? eachStep(nested.steps(step.config), `${path}[${i}].config.steps`) : [])];
  });
}

/** A definition that does not compile is a 400 naming the field. */
function compiled(input: WorkflowInput) {
  const steps = assignStepIds(input.steps);
  const result = compileWorkflow(steps);
  if (!result.valid) {
    const [first, ...others] = result.errors;
    throw new ValidationError(first!.path, first!.message, others.length > 0 ? { issues: result.errors.slice(0, 20).map((e) => ({ field: e.path, reason: e.message })) } : undefined);
  }
  return steps;
}

/** Each step's config made ready to store by its kind (secrets sealed, kept from `current` where not sent again). */
async function prepareSteps(rt: Runtime, scope: TenantScope, steps: StoredStep[], current?: StoredStep[]): Promise<StoredStep[]> {
  const before = new Map(current ? eachStep(current).map(({ step }) => [`${step.type}:${step.id}`, step.config]) : []);
  const prepare = (list: StoredStep[], path: string): Promise<StoredStep[]> =>
    Promise.all(
      list.map(async (step, i) => {
        const at = `${path}[${i}]`;
        const kind = stepKind(step.type);
        let config = step.config;
        if (kind?.nested) config = kind.nested.withSteps(config, await prepare(kind.nested.steps(config), `${at}.config.steps`));
        if (kind?.prepare) config = (await kind.prepare(config, { rt, scope, path: `${at}.config`, current: before.get(`${step.type}:${step.id}`) }));
        return { ...step, config };
      }),
    );
  return prepare(steps, 'steps');
}

async function fieldsOf(rt: Runtime, scope: TenantScope, input: WorkflowInput, current?: StoredWorkflow): Promise<WorkflowFields> {
  const { webhook, ...rest } = withoutReadOnly(input) as WorkflowInput;
  const steps = await prepareSteps(rt, scope, compiled(input), current?.steps);
  return { ...rest, steps, ...(webhook ? { webhook: await sealWebhook(rt, scope, webhook, current?.webhook, 'webhook') } : {}) };
}

/** Steps as responses show them: sealed secrets shown as `{type, configured: true}`. */
function presentSteps(steps: StoredStep[]): Workflow['steps'] {
  const present = (list: StoredStep[]): StoredStep[] =>
    list.map((step) => {
      const kind = stepKind(step.type);
      let config = step.config;
      if (kind?.nested) config = kind.nested.withSteps(config, present(kind.nested.steps(config)));
      if (kind?.present) config = kind.present(config) as Record<string, unknown>;
      return { ...step, config };
    });
  // Stored steps were checked against the kinds when written: their types are kinds' types.
  return present(steps) as Workflow['steps'];
}

/** A workflow as responses show it: its steps' and its webhook's secrets not shown. */
export function presentWorkflow(workflow: StoredWorkflow): Workflow {
  const { webhook, ...rest } = workflow;
  return { ...rest, steps: presentSteps(workflow.steps), ...(webhook ? { webhook: showWebhook(webhook) } : {}) };
}

/** The writable fields of a stored workflow, as a client would send them (secrets left out: kept). */
export function workflowInputOf(workflow: StoredWorkflow): Record<string, unknown> {
  const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...fields } = presentWorkflow(workflow);
  return fields;
}

/** Records steps name must exist in the tenant when the workflow is written: search steps' sources, agent steps' agents. */
function references(input: WorkflowInput): Reference[] {
  return eachStep(assignStepIds(input.steps)).flatMap(({ step, path }): Reference[] =>
    (stepKind(step.type)?.references?.(step.config) ?? []).map((r) => ({ ...r, field: `${path}.config.${r.field}` })),
  );
}

/** The workflow's schedules handed to the scheduler (EventBridge Scheduler, or local mode's table). */
const scheduleOf = (rt: Runtime, scope: TenantScope, workflow: StoredWorkflow, previous: number) => rt.scheduler.put(scope, workflow.id, workflow.schedules ?? [], previous);

/** A definition validated as a create validates it (what its steps name must exist) and made ready to store, without storing it: what an imported version holds. */
export async function preparedWorkflow(rt: Runtime, scope: TenantScope, given: unknown): Promise<WorkflowFields> {
  const input = parseInput(workflowInput, given);
  await rt.store.records.checkReferences(scope, dedupe(references(input)));
  return fieldsOf(rt, scope, input);
}

export async function createWorkflow(rt: Runtime, scope: TenantScope, input: WorkflowInput, idempotency?: Idempotency) {
  const created = await workflows.create(rt, scope, await fieldsOf(rt, scope, input), { references: dedupe(references(input)), idempotency });
  await scheduleOf(rt, scope, created.record, 0);
  return { ...created, record: presentWorkflow(created.record) };
}

export async function replaceWorkflow(rt: Runtime, scope: TenantScope, id: string, input: WorkflowInput, precondition?: Precondition) {
  const current = await workflows.get(rt, scope, id);
  const fields = await fieldsOf(rt, scope, input, current);
  const replaced = await workflows.replace(rt, scope, id, () => fields, dedupe(references(input)), precondition);
  await scheduleOf(rt, scope, replaced, current.schedules?.length ?? 0);
  return presentWorkflow(replaced);
}

/** Deletes a workflow, its schedules and its inbound hooks (their URLs stop working). */
export async function removeWorkflow(rt: Runtime, scope: TenantScope, id: string, precondition?: Precondition) {
  const removed = await workflows.remove(rt, scope, id, precondition);
  await rt.store.releases.of('WORKFLOW', storedWorkflow).removeAll(scope, id);
  await rt.scheduler.put(scope, id, [], removed.schedules?.length ?? 0);
  for (const hook of await rt.store.hooks.listHooks(scope, id)) await rt.store.hooks.deleteHook(scope, id, hook.id);
  return removed;
}

export async function getWorkflow(rt: Runtime, scope: TenantScope, id: string) {
  return presentWorkflow(await workflows.get(rt, scope, id));
}

export async function listWorkflows(rt: Runtime, scope: TenantScope, page: Parameters<typeof workflows.list>[2]) {
  const result = await workflows.list(rt, scope, page);
  return { ...result, items: result.items.map(presentWorkflow) };
}

/**
 * Compiles a definition for the platform API: the compilation always, and (when `store`) the
 * definition stored as a workflow if it is valid; an invalid one is reported, not stored.
 */
export async function compileDefinition(rt: Runtime, scope: TenantScope, input: WorkflowInput, options: { store: boolean }) {
  const steps = assignStepIds(input.steps);
  const result = compileWorkflow(steps);
  const compiledOut = { valid: result.valid, errors: result.errors, steps: presentSteps(steps), plan: result.plan };
  if (!options.store) return { compiled: compiledOut };
  return { compiled: compiledOut, definition: result.valid ? (await createWorkflow(rt, scope, input)).record : null };
}

/** A transaction may check each item only once. */
function dedupe(references: Reference[]): Reference[] {
  const seen = new Set<string>();
  return references.filter((r) => !seen.has(r.id) && seen.add(r.id));
}
