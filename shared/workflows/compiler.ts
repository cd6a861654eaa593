import { STEP_TYPES, stepKind } from './steps';
import type { StepLike } from './steps/step-kind';
import { dependenciesOf } from './progress';
import type { Workflow } from './workflow-schema';
import { TEMPLATE, templateStrings } from '../templates';

/**
 * Compiles a workflow definition: the dependency graph (explicit `dependsOn`, else the previous
 * step), branch conditions (`when`, `condition` steps), and every template checked against what
 * will exist when its step runs (a `map`'s steps too). Errors name the field, so a bad reference
 * is a 400 at create/update time, not a run-time surprise.
 */
type Step = Workflow['steps'][number] & { dependsOn?: string[]; when?: { step: string; category: string } };
type InnerStep = StepLike;

/** The kinds whose steps set a template variable, for messages (`classification`, `search`). */
const setterOf = (variable: string) =>
  STEP_TYPES.filter((type) => stepKind(type)?.publishes?.variables.includes(variable)).join(' or ');
const nestedOf = (step: StepLike) => stepKind(step.type)?.nested?.steps(step.config);
const categoriesOf = (step: StepLike) => stepKind(step.type)?.categories?.(step.config);
const branchesOf = (step: StepLike) => stepKind(step.type)?.branches?.among(step.config);

export interface CompileError {
  path: string;
  message: string;
}

/** A template variable and where its value will come from when the step runs. */
export interface ResolvedTemplate {
  field: string;
  variable: string;
  /** `request` (input, user_message, parameters.*), `item` (a map's item or index) or the id of the step whose output it reads. */
  from: string;
}

export interface CompiledPlan {
  /** Steps in an order that respects every dependency. */
  order: string[];
  steps: Array<{ id: string; type: string; dependsOn: string[]; when?: { step: string; category: string }; templates: ResolvedTemplate[]; steps?: Array<{ id: string; type: string; templates: ResolvedTemplate[] }> }>;
  /** Each classification step's categories and the steps that run only for each. */
  branches: Array<{ step: string; category: string; runs: string[] }>;
  /** Each condition step and the steps that run only when it is true (`then`) or false (`else`). */
  conditions: Array<{ step: string; then: string[]; else: string[] }>;
}

const VARIABLES = 'input, user_message, parameters.<name>, user.id, user.groups, user.verified, steps.<id>.output.<path>, category, context, and item, index inside a map';

/** The end user the execution acts for (null id, no groups, unverified without one). */
const USER_VARIABLES = new Set(['user.id', 'user.groups', 'user.verified']);

/** What a template may read: the steps that finished before it, and whether it runs inside a map. */
interface Visible {
  steps: Map<string, string>; // id → type, in the order they ran
  inMap: boolean;
  /** Every step id of the workflow, a map's steps' included. */
  known: Set<string>;
}

function checkTemplates(step: InnerStep, path: string, visible: Visible, errors: CompileError[]): ResolvedTemplate[] {
  const resolved: ResolvedTemplate[] = [];
  const fields = stepKind(step.type)?.templateFields ?? [];
  // {{category}} and {{context}} read the latest step before this one that sets them.
  const latest = (variable: string) => [...visible.steps].reverse().find(([, t]) => stepKind(t)?.publishes?.variables.includes(variable))?.[0];
  for (const field of fields) {
    for (const [at, template] of templateStrings(step.config[field], field)) {
      const where = `${path}.config.${at}`;
      for (const match of template.matchAll(TEMPLATE)) {
        const expr = match[1]!;
        const parts = expr.split('.');
        const root = parts[0];
        const found = (from: string) => resolved.push({ field: at, variable: expr, from });
        if (expr === 'input' || expr === 'user_message' || (root === 'parameters' && parts.length >= 2 && parts.every(Boolean)) || USER_VARIABLES.has(expr)) {
          found('request');
          continue;
        }
        if (expr === 'index' || (root === 'item' && parts.every(Boolean))) {
          if (visible.inMap) found('item');
          else errors.push({ path: where, message: `{{${expr}}} is only known inside a map's steps` });
          continue;
        }
        if (expr === 'category' || expr === 'context') {
          const from = latest(expr);
          if (from) found(from);
          else errors.push({ path: where, message: `{{${expr}}} needs a ${setterOf(expr)} step before this one` });
          continue;
        }
        if (root === 'steps' && parts.length >= 3 && parts[2] === 'output') {
          const id = parts[1]!;
          const type = visible.steps.get(id);
          if (!visible.known.has(id)) errors.push({ path: where, message: `{{${expr}}} names step ${id}, which does not exist` });
          else if (!type) errors.push({ path: where, message: `{{${expr}}} names step ${id}, which does not run before this step` });
          else if (parts.length > 3 && !stepKind(type)?.isOutputPath(parts.slice(3))) errors.push({ path: where, message: `{{${expr}}}: a ${type} step's output has no ${parts.slice(3).join('.')}` });
          else found(id);
          continue;
        }
        errors.push({ path: where, message: `{{${expr}}} is not a known template variable (${VARIABLES})` });
      }
    }
  }
  return resolved;
}

export function compileWorkflow(steps: Step[]): { valid: boolean; errors: CompileError[]; plan: CompiledPlan } {
  const errors: CompileError[] = [];
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const deps = dependenciesOf(steps);

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
  // What a step sees: its ancestors, in definition order (the latest classification is the nearest).
  const visibleTo = (i: number): Map<string, string> => new Map(steps.filter((s) => before(i).has(s.id)).map((s) => [s.id, s.type]));
  const resolved: ResolvedTemplate[][] = steps.map(() => []);
  const inner: Array<Array<{ id: string; type: string; templates: ResolvedTemplate[] }> | undefined> = steps.map(() => undefined);
  const ids = new Set(steps.map((s) => s.id));
  const known = new Set([...ids, ...steps.flatMap((s) => (nestedOf(s) ?? []).map((sub) => sub.id))]);

  steps.forEach((step, i) => {
    if (step.when) {
      const target = step.when.step;
      const cls = steps[index.get(target) ?? -1];
      const names = cls && categoriesOf(cls);
      if (!cls) errors.push({ path: `steps[${i}].when.step`, message: `names step ${target}, which does not exist` });
      else if (!names) errors.push({ path: `steps[${i}].when.step`, message: `names ${target}, which is not a classification step` });
      else if (!before(i).has(target)) errors.push({ path: `steps[${i}].when.step`, message: `names ${target}, which does not run before this step (add it to dependsOn)` });
      else {
        if (!names.includes(step.when.category)) errors.push({ path: `steps[${i}].when.category`, message: `must be one of: ${names.join(', ')}` });
      }
    }
    const branches = branchesOf(step);
    if (branches) {
      const branched = new Map<string, string>();
      for (const branch of ['then', 'else'] as const) {
        (branches[branch] ?? []).forEach((target, j) => {
          const path = `steps[${i}].config.${branch}[${j}]`;
          const t = index.get(target);
          if (t === undefined) errors.push({ path, message: `names step ${target}, which does not exist` });
          else if (!before(t).has(step.id)) errors.push({ path, message: `names ${target}, which does not run after this step (add ${step.id} to its dependsOn)` });
          else if (branched.has(target)) errors.push({ path, message: `names ${target}, which is already in ${branched.get(target)}` });
          else branched.set(target, branch);
        });
      }
    }
    resolved[i] = checkTemplates(step, `steps[${i}]`, { steps: visibleTo(i), inMap: false, known }, errors);
    const nested = nestedOf(step);
    if (nested) {
      // A map's steps see what the map sees, and the map's own steps before them.
      const visible = visibleTo(i);
      const seen = new Set<string>();
      inner[i] = nested.map((sub, j) => {
        const path = `steps[${i}].config.steps[${j}]`;
        if (ids.has(sub.id) || seen.has(sub.id)) errors.push({ path: `${path}.id`, message: `repeats the step id ${sub.id}: ids are unique in the workflow` });
        seen.add(sub.id);
        const templates = checkTemplates(sub, path, { steps: new Map(visible), inMap: true, known }, errors);
        visible.set(sub.id, sub.type);
        return { id: sub.id, type: sub.type, templates };
      });
    }
  });

  return {
    valid: errors.length === 0,
    errors,
    plan: {
      order,
      steps: steps.map((s, i) => ({ id: s.id, type: s.type, dependsOn: deps[i]!, ...(s.when ? { when: s.when } : {}), templates: resolved[i]!, ...(inner[i] ? { steps: inner[i] } : {}) })),
      branches: steps.flatMap((cls) =>
        (categoriesOf(cls) ?? []).map((category) => ({ step: cls.id, category, runs: steps.filter((s) => s.when?.step === cls.id && s.when.category === category).map((s) => s.id) })),
      ),
      conditions: steps.flatMap((s) => {
        const branches = branchesOf(s);
        return branches ? [{ step: s.id, then: branches.then ?? [], else: branches.else ?? [] }] : [];
      }),
    },
  };
}
