import type { SimulationLinkDatum, SimulationNodeDatum } from 'd3-force';
import { useMemo } from 'preact/hooks';
import type { MemoryResult } from '../contract';
import { useModule } from './use-module';

// The force layout loads with the first memory graph, not with the console.
const loadForces = () => import('d3-force');

export type MemoryNode = MemoryResult['nodes'][number];
export type MemoryEdge = MemoryResult['edges'][number];

type Placed = MemoryNode & SimulationNodeDatum;

const COLORS: Record<string, string> = { user: '#245d52', person: '#7a3e9d', place: '#1d5fa8', organisation: '#8a5a00', product: '#b4581e', date: '#55606b', number: '#55606b' };

/** A user's memory: entities as circles, facts as labelled lines, placed by a force layout run to rest. */
export function MemoryGraph({ nodes, edges }: { nodes: MemoryNode[]; edges: MemoryEdge[] }) {
  const W = 720;
  const H = 420;
  const d3 = useModule(loadForces);
  const placed = useMemo(() => {
    if (!d3) return undefined;
    const { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation } = d3;
    const ns: Placed[] = nodes.map((n) => ({ ...n }));
    const ids = new Set(ns.map((n) => n.id));
    const links: Array<SimulationLinkDatum<Placed> & { edge: MemoryEdge }> = edges.filter((e) => ids.has(e.from) && ids.has(e.to)).map((e) => ({ source: e.from, target: e.to, edge: e }));
    // Run to rest at once (no animation): the same input draws the same picture.
    const simulation = forceSimulation(ns)
      .force('link', forceLink<Placed, (typeof links)[number]>(links).id((n) => n.id).distance(130))
      .force('charge', forceManyBody().strength(-420))
      .force('collide', forceCollide(42))
      .force('center', forceCenter(W / 2, H / 2))
      .stop();
    for (let i = 0; i < 300; i++) simulation.tick();
    for (const n of ns) {
      n.x = Math.max(50, Math.min(W - 50, n.x ?? W / 2));
      n.y = Math.max(30, Math.min(H - 30, n.y ?? H / 2));
    }
    return { nodes: ns, links: links.map((l) => ({ edge: l.edge, source: l.source as Placed, target: l.target as Placed })) };
  }, [d3, JSON.stringify(nodes), JSON.stringify(edges)]);
  if (!placed) return <p class="muted">Drawing…</p>;

  return (
    <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={`Memory graph: ${edges.map((e) => e.fact ?? e.relation).join('; ') || `${nodes.length} entities`}`} class="memory">
      {placed.links.map(({ edge, source, target }) => (
        <g key={edge.id} class={edge.invalidAt ? 'invalid' : undefined}>
          <line x1={source.x} y1={source.y} x2={target.x} y2={target.y} class="memory-edge" />
          <text x={((source.x ?? 0) + (target.x ?? 0)) / 2} y={((source.y ?? 0) + (target.y ?? 0)) / 2 - 4} text-anchor="middle" class="edge-label">
            {edge.relation}
          </text>
        </g>
      ))}
      {placed.nodes.map((n) => (
        <g key={n.id} transform={`translate(${n.x},${n.y})`}>
          <circle r={n.type === 'user' ? 18 : 12 + Math.min(8, (n.mentions ?? 1) * 2)} fill={COLORS[n.type] ?? '#3d6b8c'} />
          <text y={32} text-anchor="middle" class="node-label">
            {n.label.length > 24 ? `${n.label.slice(0, 23)}…` : n.label}
          </text>
        </g>
      ))}
    </svg>
  );
}
