import { stepKind } from './steps';
import type { Workflow } from './workflow-schema';

/**
 * Compiles a workflow definition: the dependency graph (explicit `dependsOn`, else the previous
 * step), branch conditions (`when`), and every template checked against what will exist when its
 * step runs. Errors name the field, so a bad reference is a 400 at create/update time, not a
 * run-time surprise.
 */
type Step = Workflow['steps'][number] & { dependsOn?: string[]; when?: { step: string; category: string } };

export interface CompileError {
  path: string;
  message: string;
}

/** A template variable and where its value will come from when the step runs. */
export interface ResolvedTemplate {
  field: string;
  variable: string;
  /** `request` (input, user_message, parameters.*) or the id of the step whose output it reads. */
  from: string;
}

export interface CompiledPlan {
  /** Steps in an order that respects every dependency. */
  order: string[];
  steps: Array<{ id: string; type: string; dependsOn: string[]; when?: { step: string; category: string }; templates: ResolvedTemplate[] }>;
  /** Each classification step's categories and the steps that run only for each. */
  branches: Array<{ step: string; category: string; runs: string[] }>;
}

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

function templatesOf(step: Step): Array<[string, string]> {
  const config = step.config;
  const fields = stepKind(step.type)?.templateFields ?? [];
  return fields.filter((f) => typeof config[f] === 'string').map((f) => [f, config[f] as string]);
}

export function compileWorkflow(steps: Step[]): { valid: boolean; errors: CompileError[]; plan: CompiledPlan } {
  const errors: CompileError[] = [];
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const deps = steps.map((s, i) => s.dependsOn ?? (i === 0 ? [] : [steps[i - 1]!.id]));

  deps.forEach((list, i) =>
    list.forEach((dep, j) => {
      if (!index.has(dep)) errors.push({ path: `steps[${i}].dependsOn[${j}]`, message: `names step ${dep}, which does not exist` });
      else if (dep === steps[i]!.id) errors.push({ path: `steps[${i}].dependsOn[${j}]`, message: 'names the step itself' });
    }),
  );

  // Topological order (Kahn); what is left over sits on a cycle.
  const remaining = deps.map((list) => new Set(list.filter((d) => index.has(d) && d !== undefined)));
  const order: string[] = [];
  const done = new Set<string>();
  let progress = true;
  while (progress) {
    progress = false;
    steps.forEach((s, i) => {
      if (done.has(s.id) || [...remaining[i]!].some((d) => !done.has(d) && d !== s.id)) return;
      done.add(s.id);
      order.push(s.id);
      progress = true;
    });
  }
  steps.forEach((s, i) => {
    if (!done.has(s.id)) errors.push({ path: `steps[${i}].dependsOn`, message: 'is part of a dependency cycle' });
  });

  // Ancestors: the steps whose output a step may use.
  const ancestors = new Map<string, Set<string>>();
  for (const id of order) {
    const i = index.get(id)!;
    const set = new Set<string>();
    for (const d of deps[i]!) {
      if (!index.has(d)) continue;
      set.add(d);
      for (const a of ancestors.get(d) ?? []) set.add(a);
    }
    ancestors.set(id, set);
  }
  const before = (i: number) => ancestors.get(steps[i]!.id) ?? new Set<string>();
  const typeOf = (id: string) => steps[index.get(id)!]?.type;
  // {{category}} and {{context}} read the latest such step before this one, in definition order.
  const latest = (i: number, type: string) => steps.slice(0, i).reverse().find((s) => s.type === type && before(i).has(s.id))?.id;
  const resolved: ResolvedTemplate[][] = steps.map(() => []);

  steps.forEach((step, i) => {
    if (step.when) {
      const target = step.when.step;
      const cls = steps[index.get(target) ?? -1];
      if (!cls) errors.push({ path: `steps[${i}].when.step`, message: `names step ${target}, which does not exist` });
      else if (cls.type !== 'classification') errors.push({ path: `steps[${i}].when.step`, message: `names ${target}, which is not a classification step` });
      else if (!before(i).has(target)) errors.push({ path: `steps[${i}].when.step`, message: `names ${target}, which does not run before this step (add it to dependsOn)` });
      else {
        const names = (cls.config.categories as Array<string | { name: string }>).map((c) => (typeof c === 'string' ? c : c.name));
        if (!names.includes(step.when.category)) errors.push({ path: `steps[${i}].when.category`, message: `must be one of: ${names.join(', ')}` });
      }
    }
    for (const [field, template] of templatesOf(step)) {
      const path = `steps[${i}].config.${field}`;
      for (const match of template.matchAll(TEMPLATE)) {
        const expr = match[1]!;
        const parts = expr.split('.');
        const root = parts[0];
        const found = (from: string) => resolved[i]!.push({ field, variable: expr, from });
        if (expr === 'input' || expr === 'user_message' || (root === 'parameters' && parts.length >= 2 && parts.every(Boolean))) {
          found('request');
          continue;
        }
        if (expr === 'category' || expr === 'context') {
          const type = expr === 'category' ? 'classification' : 'search';
          const from = latest(i, type);
          if (from) found(from);
          else errors.push({ path, message: `{{${expr}}} needs a ${type} step before this one` });
          continue;
        }
        if (root === 'steps' && parts.length >= 3 && parts[2] === 'output') {
          const id = parts[1]!;
          if (!index.has(id)) errors.push({ path, message: `{{${expr}}} names step ${id}, which does not exist` });
          else if (!before(i).has(id)) errors.push({ path, message: `{{${expr}}} names step ${id}, which does not run before this step` });
          else if (parts.length > 3 && !stepKind(typeOf(id)!)?.isOutputPath(parts.slice(3))) {
            errors.push({ path, message: `{{${expr}}}: a ${typeOf(id)} step's output has no ${parts.slice(3).join('.')}` });
          } else found(id);
          continue;
        }
        errors.push({ path, message: `{{${expr}}} is not a known template variable (input, user_message, parameters.<name>, steps.<id>.output.<path>, category, context)` });
      }
    }
  });

  return {
    valid: errors.length === 0,
    errors,
    plan: {
      order,
      steps: steps.map((s, i) => ({ id: s.id, type: s.type, dependsOn: deps[i]!, ...(s.when ? { when: s.when } : {}), templates: resolved[i]! })),
      branches: steps
        .filter((s) => s.type === 'classification')
        .flatMap((cls) =>
          (cls.config.categories as Array<string | { name: string }>).map((c) => {
            const category = typeof c === 'string' ? c : c.name;
            return { step: cls.id, category, runs: steps.filter((s) => s.when?.step === cls.id && s.when.category === category).map((s) => s.id) };
          }),
        ),
    },
  };
}
