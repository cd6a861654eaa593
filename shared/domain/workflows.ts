import type { Idempotency, Reference } from '../store/records';
import type { TenantScope } from '../tenancy';
import { ValidationError } from '../errors';
import { collection } from './collection';
import { compileWorkflow } from './workflow-compiler';
import { withoutReadOnly } from './schema-helpers';
import type { Workflow, WorkflowInput } from './workflow-schema';
import type { Runtime } from '../runtime';

export const workflows = collection<Workflow>('WORKFLOW', 'workflow', 'workflow');

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

/** Normalised fields of a valid definition; a definition that does not compile is a 400 naming the field. */
function fieldsOf(input: WorkflowInput) {
  const rest = withoutReadOnly(input) as Omit<WorkflowInput, 'steps'>;
  const steps = assignStepIds(input.steps);
  const compiled = compileWorkflow(steps);
  if (!compiled.valid) {
    const [first, ...others] = compiled.errors;
    throw new ValidationError(first!.path, first!.message, others.length > 0 ? { issues: compiled.errors.slice(0, 20).map((e) => ({ field: e.path, reason: e.message })) } : undefined);
  }
  return { ...rest, steps } as Omit<Workflow, 'id' | 'createdAt' | 'updatedAt' | 'version'>;
}

/** Search steps must name knowledge sources that exist in the tenant when the workflow is written. */
function sourceReferences(input: WorkflowInput): Reference[] {
  return input.steps.flatMap((step, i) =>
    step.type === 'search'
      ? [{ kind: 'KS' as const, id: step.config.knowledgeSourceId, field: `steps[${i}].config.knowledgeSourceId` }]
      : [],
  );
}

export function createWorkflow(rt: Runtime, scope: TenantScope, input: WorkflowInput, idempotency?: Idempotency) {
  return workflows.create(rt, scope, fieldsOf(input), { references: dedupe(sourceReferences(input)), idempotency });
}

export function replaceWorkflow(rt: Runtime, scope: TenantScope, id: string, input: WorkflowInput) {
  return workflows.replace(rt, scope, id, () => fieldsOf(input), dedupe(sourceReferences(input)));
}

/**
 * Compiles a definition for the platform API: the compilation always, and (when `store`) the
 * definition stored as a workflow if it is valid; an invalid one is reported, not stored.
 */
export async function compileDefinition(rt: Runtime, scope: TenantScope, input: WorkflowInput, options: { store: boolean }) {
  const steps = assignStepIds(input.steps);
  const result = compileWorkflow(steps);
  const compiled = { valid: result.valid, errors: result.errors, steps, plan: result.plan };
  if (!options.store) return { compiled };
  return { compiled, definition: result.valid ? (await createWorkflow(rt, scope, input)).record : null };
}

/** A transaction may check each item only once. */
function dedupe(references: Reference[]): Reference[] {
  const seen = new Set<string>();
  return references.filter((r) => !seen.has(r.id) && seen.add(r.id));
}
