import { analyze } from '../search/analyzer';
import type { TenantScope } from '../tenancy';
import { normaliseLabel } from './extract';
import { isCurrent, memoryOwner, type MemoryEdge, type MemoryEpisode, type MemoryItem, type MemoryNode } from '../store/memory-graph';
import type { Runtime } from '../runtime';
import { NotFoundError } from '../errors';
import { isId } from '../ids';
import { isoNow } from '../clock';

export interface MemoryQuery {
  agentId: string;
  userId?: string;
  sessionId?: string;
  query?: string;
  entity?: string;
  depth: number;
  limit: number;
  /** Point in time (ISO): what held then, as Cairn knew it then. */
  asOf?: string;
  /** Also return facts that were invalidated (the history), not only current ones. */
  includeInvalidated?: boolean;
}

/** Facts a model is given about the user: the newest current ones. */
const FACTS_FOR_MODEL = 20;

/** What the agent currently knows about the user (one Query): the facts a conversation starts with. */
export async function rememberedFacts(rt: Runtime, scope: TenantScope, agentId: string, userId: string): Promise<string[]> {
  const edges = (await rt.store.memoryGraph.loadMemory(scope, memoryOwner({ userId }).userKey, agentId, 'edge')) as MemoryEdge[];
  return edges
    .filter(isCurrent)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    .slice(0, FACTS_FOR_MODEL)
    .map((e) => e.fact);
}

/** Without a user or session, the graph of at most this many of the agent's users is searched. */
const MAX_OWNERS = 20;
const RECENCY_DAYS = 7;

const round = (n: number) => Math.round(n * 10_000) / 10_000;

/** Share of a text's terms that the query contains (0…1). */
function lexical(queryTerms: Set<string>, text: string): number {
  if (queryTerms.size === 0) return 0;
  const terms = analyze(text);
  if (terms.length === 0) return 0;
  const matched = terms.filter((t) => queryTerms.has(t)).length;
  return matched / terms.length;
}

/**
 * Ranks the memory graph for a question: lexical match of labels and facts, graph distance from
 * the matched (or named) entities within `depth` hops, and recency. Deterministic: ties break by id.
 * The agent must be the tenant's (else 404).
 */
export async function queryMemory(rt: Runtime, scope: TenantScope, q: MemoryQuery) {
  if (!isId('agent', q.agentId) || !(await rt.store.records.exists(scope, 'AGENT', q.agentId))) throw new NotFoundError('agent', q.agentId);
  const owners = q.userId || q.sessionId ? [memoryOwner(q).userKey] : await rt.store.memoryGraph.rememberedUsers(scope, q.agentId, MAX_OWNERS);
  const items: MemoryItem[] = (await Promise.all(owners.map((o) => rt.store.memoryGraph.loadMemory(scope, o, q.agentId)))).flat();
  const t = q.asOf ?? isoNow(rt.clock);
  const nodes = items.filter((i): i is MemoryNode => i.kind === 'node' && i.createdAt <= t);
  const edges = items.filter((i): i is MemoryEdge => {
    if (i.kind !== 'edge' || i.createdAt > t) return false;
    if (q.includeInvalidated) return true;
    if (q.asOf) return i.validAt <= t && (i.invalidAt === null || i.invalidAt > t) && (i.expiredAt === null || i.expiredAt > t);
    return isCurrent(i);
  });
  const episodes = items.filter((i): i is MemoryEpisode => i.kind === 'episode' && i.at <= t);
  const newest = Math.max(0, ...items.map((i) => Date.parse(i.kind === 'episode' ? i.at : i.kind === 'node' ? i.lastSeenAt : i.createdAt)));
  const recency = (iso: string) => Math.exp(-(newest - Date.parse(iso)) / (RECENCY_DAYS * 86_400_000));

  const queryTerms = new Set(analyze(q.query ?? ''));
  const nodeLex = new Map(nodes.map((n) => [n.id, lexical(queryTerms, n.label)]));
  const edgeLex = new Map(edges.map((e) => [e.id, lexical(queryTerms, e.fact)]));

  // Where the walk starts: the named entity, else what the query matches, else the user.
  let seeds: string[];
  if (q.entity) {
    const wanted = normaliseLabel(q.entity);
    seeds = nodes.filter((n) => n.norm === wanted || (wanted.length >= 3 && n.norm.includes(wanted))).map((n) => n.id);
  } else if (queryTerms.size > 0) {
    seeds = [...nodes.filter((n) => nodeLex.get(n.id)! > 0).map((n) => n.id), ...edges.filter((e) => edgeLex.get(e.id)! > 0).flatMap((e) => [e.to])];
  } else {
    seeds = nodes.filter((n) => n.type === 'user').map((n) => n.id);
  }

  const neighbours = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    const list = neighbours.get(a);
    if (list) list.push(b);
    else neighbours.set(a, [b]);
  };
  for (const e of edges) {
    link(e.from, e.to);
    link(e.to, e.from);
  }
  const distance = new Map<string, number>(seeds.map((s) => [s, 0]));
  let frontier = [...new Set(seeds)];
  for (let d = 1; d <= q.depth && frontier.length > 0; d++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const n of neighbours.get(id) ?? []) {
        if (distance.has(n)) continue;
        distance.set(n, d);
        next.push(n);
      }
    }
    frontier = next;
  }

  const byScore = <T extends { id: string; score: number }>(a: T, b: T) => b.score - a.score || a.id.localeCompare(b.id);
  const rankedNodes = nodes
    .filter((n) => distance.has(n.id))
    .map((n) => ({ node: n, id: n.id, score: round(0.5 * nodeLex.get(n.id)! + 0.35 / (1 + distance.get(n.id)!) + 0.15 * recency(n.lastSeenAt)) }))
    .sort(byScore)
    .slice(0, q.limit);
  const shown = new Set(rankedNodes.map((r) => r.id));

  const rankedEdges = edges
    .filter((e) => shown.has(e.from) && shown.has(e.to))
    .map((e) => ({
      edge: e,
      id: e.id,
      score: 0.5 * edgeLex.get(e.id)! + 0.35 / (1 + Math.min(distance.get(e.from)!, distance.get(e.to)!)) + 0.15 * recency(e.createdAt) - (e.invalidAt ? 0.2 : 0),
    }))
    .sort(byScore)
    .slice(0, q.limit);

  const rankedEpisodes = episodes
    .map((p) => {
      const lex = lexical(queryTerms, p.text);
      const linked = p.entityIds.some((id) => shown.has(id)) ? 1 : 0;
      const sameSession = q.userId && q.sessionId === p.sessionId ? 0.05 : 0;
      return { episode: p, id: p.id, relevant: queryTerms.size === 0 && !q.entity ? true : lex > 0 || linked > 0, score: 0.6 * lex + 0.25 * linked + 0.15 * recency(p.at) + sameSession };
    })
    .filter((r) => r.relevant)
    .sort(byScore)
    .slice(0, q.limit);

  return {
    nodes: rankedNodes.map(({ node, score }) => ({ id: node.id, type: node.type, label: node.label, score, mentions: node.mentions, userId: node.userId })),
    edges: rankedEdges.map(({ edge }) => ({
      id: edge.id,
      from: edge.from,
      to: edge.to,
      relation: edge.relation,
      fact: edge.fact,
      validAt: edge.validAt,
      invalidAt: edge.invalidAt,
      createdAt: edge.createdAt,
      expiredAt: edge.expiredAt,
    })),
    episodes: rankedEpisodes.map(({ episode }) => ({ id: episode.id, sessionId: episode.sessionId, text: episode.text, at: episode.at })),
  };
}
