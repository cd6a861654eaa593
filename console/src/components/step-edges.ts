/** What the step graph draws, apart from how: kept free of the DOM so a unit test reads it. */

export interface GraphStep {
  id: string;
  type: string;
  dependsOn?: string[];
  when?: { step: string; category: string };
  then?: string[];
  else?: string[];
  inner?: number;
  status?: string;
}

interface Edge {
  from: string;
  to: string;
  label?: string;
  /** A condition's branch to a step that runs later but not straight after it (drawn dashed). */
  branch?: boolean;
}

/**
 * The edges the workflow compiler draws: explicit `dependsOn`, else the previous step; a
 * condition's `then`/`else` and a `when` category label theirs. A branch may name any step that
 * runs after the condition, so one with no edge of its own from the condition gets a dashed one.
 */
export function edgesOf(steps: GraphStep[]): Edge[] {
  const ids = new Set(steps.map((s) => s.id));
  const label = new Map<string, string>();
  for (const s of steps) {
    for (const t of s.then ?? []) label.set(`${s.id}→${t}`, 'then');
    for (const t of s.else ?? []) label.set(`${s.id}→${t}`, 'else');
    if (s.when) label.set(`${s.when.step}→${s.id}`, `= ${s.when.category}`);
  }
  const edges: Edge[] = [];
  steps.forEach((s, i) => {
    const deps = s.dependsOn ?? (i > 0 ? [steps[i - 1]!.id] : []);
    for (const d of deps) if (ids.has(d)) edges.push({ from: d, to: s.id, label: label.get(`${d}→${s.id}`) });
  });
  const drawn = new Set(edges.map((e) => `${e.from}→${e.to}`));
  for (const [key, branch] of label) {
    const [from, to] = key.split('→') as [string, string];
    if (!drawn.has(key) && ids.has(from) && ids.has(to) && (branch === 'then' || branch === 'else')) edges.push({ from, to, label: branch, branch: true });
  }
  return edges;
}
