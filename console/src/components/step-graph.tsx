import type dagreModule from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';
import { useModule } from './use-module';

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
}

/**
 * The edges the workflow compiler draws: explicit `dependsOn`, else the previous step; a
 * condition's `then`/`else` and a `when` category label theirs.
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
  return edges;
}

interface Point {
  x: number;
  y: number;
}

const loadDagre = () => import('@dagrejs/dagre').then((m: { default: typeof dagreModule }) => m.default);

const W = 150;
const H = 46;

/** The steps and their branches, laid out top to bottom by dagre, drawn as SVG. */
export function StepGraph({ steps, title }: { steps: GraphStep[]; title: string }) {
  // The layout library loads with the first graph, not with the console.
  const dagre = useModule(loadDagre);
  const layout = useMemo(() => {
    if (!dagre) return undefined;
    const g = new dagre.graphlib.Graph({ multigraph: false });
    g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    const unique = steps.filter((s, i) => s.id && steps.findIndex((x) => x.id === s.id) === i);
    for (const s of unique) g.setNode(s.id, { width: W, height: H });
    const edges = edgesOf(unique);
    for (const e of edges) g.setEdge(e.from, e.to, { label: e.label, width: e.label ? 60 : 0, height: e.label ? 14 : 0 });
    dagre.layout(g);
    const graph = g.graph() as { width?: number; height?: number };
    return {
      width: Math.max(graph.width ?? 0, W + 16),
      height: Math.max(graph.height ?? 0, H + 16),
      nodes: unique.map((s) => ({ step: s, ...(g.node(s.id) as Point) })),
      edges: edges.map((e) => ({ ...e, points: (g.edge(e.from, e.to) as { points?: Point[] }).points ?? [] })),
    };
  }, [dagre, JSON.stringify(steps)]);

  if (steps.length === 0) return <p class="muted">No steps to draw yet.</p>;
  if (!layout) return <p class="muted">Drawing…</p>;
  const summary = layout.edges.map((e) => `${e.from} → ${e.to}${e.label ? ` (${e.label})` : ''}`).join('; ');
  return (
    <figure class="graph">
      <svg viewBox={`0 0 ${layout.width} ${layout.height}`} width={layout.width} height={layout.height} role="img" aria-label={`${title}: ${summary || 'one step'}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" fill="#55606b" />
          </marker>
        </defs>
        {layout.edges.map((e) => {
          const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
          const mid = e.points[Math.floor(e.points.length / 2)];
          return (
            <g key={`${e.from}-${e.to}`}>
              <path d={d} fill="none" stroke="#55606b" stroke-width="1.5" marker-end="url(#arrow)" />
              {e.label && mid ? (
                <text x={mid.x + 6} y={mid.y} class="edge-label">
                  {e.label}
                </text>
              ) : null}
            </g>
          );
        })}
        {layout.nodes.map((n) => (
          <g key={n.step.id} transform={`translate(${n.x - W / 2},${n.y - H / 2})`} class={`node node-${n.step.status ?? 'none'} node-type-${n.step.type}`}>
            <rect width={W} height={H} rx="6" />
            <text x={W / 2} y={19} text-anchor="middle" class="node-id">
              {n.step.id.length > 20 ? `${n.step.id.slice(0, 19)}…` : n.step.id}
            </text>
            <text x={W / 2} y={36} text-anchor="middle" class="node-type">
              {n.step.type}
              {n.step.inner ? ` ×${n.step.inner} steps` : ''}
              {n.step.status ? ` · ${n.step.status}` : ''}
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
}
