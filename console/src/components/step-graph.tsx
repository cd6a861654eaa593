import type dagreModule from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';
import { useModule } from './use-module';
import { edgesOf, type GraphStep } from './step-edges';

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
    const nodes = unique.map((s) => ({ step: s, ...(g.node(s.id) as Point) }));
    const placed = edges.map((e) => {
      const at = g.edge(e.from, e.to) as { points?: Point[]; x?: number; y?: number };
      return { ...e, points: at.points ?? [], labelAt: e.label && at.x !== undefined && at.y !== undefined ? { x: at.x, y: at.y } : undefined };
    });
    // The box around everything drawn: an edge that goes around a node may pass outside dagre's own.
    const xs = [...nodes.flatMap((n) => [n.x - W / 2, n.x + W / 2]), ...placed.flatMap((e) => [...e.points.map((p) => p.x), ...(e.labelAt ? [e.labelAt.x - 30, e.labelAt.x + 30] : [])])];
    const ys = [...nodes.flatMap((n) => [n.y - H / 2, n.y + H / 2]), ...placed.flatMap((e) => [...e.points.map((p) => p.y), ...(e.labelAt ? [e.labelAt.y - 8, e.labelAt.y + 8] : [])])];
    const box = { x: Math.min(...xs) - 8, y: Math.min(...ys) - 8, width: Math.max(...xs) - Math.min(...xs) + 16, height: Math.max(...ys) - Math.min(...ys) + 16 };
    return { box, nodes, edges: placed };
  }, [dagre, JSON.stringify(steps)]);

  if (steps.length === 0) return <p class="muted">No steps to draw yet.</p>;
  if (!layout) return <p class="muted">Drawing…</p>;
  const summary = layout.edges.map((e) => `${e.from} → ${e.to}${e.label ? ` (${e.label})` : ''}`).join('; ');
  return (
    <figure class="graph">
      <svg viewBox={`${layout.box.x} ${layout.box.y} ${layout.box.width} ${layout.box.height}`} width={layout.box.width} height={layout.box.height} role="img" aria-label={`${title}: ${summary || 'one step'}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" fill="#55606b" />
          </marker>
        </defs>
        {layout.edges.map((e) => {
          const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
          return (
            <g key={`${e.from}-${e.to}`}>
              <path d={d} fill="none" stroke="#55606b" stroke-width="1.5" stroke-dasharray={e.branch ? '5 4' : undefined} marker-end="url(#arrow)" />
              {e.labelAt ? (
                <text x={e.labelAt.x} y={e.labelAt.y + 4} text-anchor="middle" class="edge-label">
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
