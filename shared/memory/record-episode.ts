import { createHash } from 'node:crypto';
import { digestId, newId } from '../ids';
import type { TenantScope } from '../tenancy';
import { extractMemory, FUNCTIONAL_RELATIONS, headNoun, normaliseLabel, OPPOSITE_RELATIONS, type Extraction } from './extract';
import { isCurrent, memoryOwner, type MemoryEdge, type MemoryEpisode } from '../store/memory-graph';
import type { Runtime } from '../runtime';
import { isoNow } from '../clock';
import type { WriteRequest } from '../store/batch';

/** The same entity mentioned again is the same node: its id derives from agent, owner and label. */
export function nodeIdOf(agentId: string, userKey: string, norm: string): string {
  return digestId('memoryNode', createHash('sha256').update(`${agentId}\u0000${userKey}\u0000${norm}`).digest());
}

const USER_NORM = '\u0000user';

/** Relations stated with a verb ("I prefer …"); any other relation is an attribute ("my email is …"). */
const VERB_RELATIONS = new Set(['prefers', 'likes', 'dislikes', 'uses', 'wants', 'has', 'ordered', 'drives', 'eats', 'lives_in', 'works_at', 'works_as', 'allergic_to']);
/** Verb relations a person holds many of at once ("I have a dog", "I have a car"). */
const ACCUMULATING = new Set(['has', 'ordered', 'allergic_to']);

function factText(relation: string, object: string): string {
  if (relation === 'name') return `user's name is ${object}`;
  if (relation === 'age') return `user is ${object} years old`;
  if (relation === 'is_a') return `user is a ${object}`;
  if (relation === 'from') return `user is from ${object}`;
  if (VERB_RELATIONS.has(relation)) return `user ${relation.replace(/_/g, ' ')} ${object}`;
  return `user's ${relation.replace(/_/g, ' ')} is ${object}`;
}

/**
 * Whether a new fact and a current one cannot both hold: a different value of a one-valued
 * relation (name, city, employer, any "my X is Y"); a preference for another thing of the same
 * kind ("express shipping" vs "standard shipping" share the head noun); liking what one dislikes.
 */
function contradicts(current: MemoryEdge, relation: string, toId: string, toLabel: string): boolean {
  if (current.relation !== relation) return OPPOSITE_RELATIONS[relation] === current.relation && current.to === toId;
  if (current.to === toId || ACCUMULATING.has(relation)) return false;
  if (FUNCTIONAL_RELATIONS.has(relation) || !VERB_RELATIONS.has(relation)) return true;
  return headNoun(current.toLabel) === headNoun(toLabel);
}

export interface Turn {
  agentId: string;
  userId?: string;
  sessionId: string;
  text: string;
  reply: string;
  at: Date;
}

/** What recording a turn writes, planned by `episodeWrites`. */
export interface EpisodeWrites {
  /** Puts (new edges, the memory index; nodes too for a new memory), for one `writeBatch` with whatever else the caller stores. */
  puts: WriteRequest[];
  /** The episode's put: what says the turn was recorded (written with the rest, or after it). */
  episodePut: WriteRequest[];
  /** Updates of items that may exist already: node mentions, ended facts (nothing for a new memory). */
  update: () => Promise<void>;
  episode: MemoryEpisode;
  nodes: number;
  facts: number;
  invalidated: number;
}

/**
 * Plans the recording of one converse turn: the episode, the entities it mentions (as nodes) and
 * the facts it states (as edges from the user node). A fact that contradicts a current one
 * invalidates it (invalidAt = when the new one became valid, expiredAt = now) instead of deleting
 * it; a fact stated again only counts another mention. `newOwner`: the owner's memory cannot hold
 * anything yet (an anonymous session that begins with this turn), so nothing is read and nodes
 * are put rather than updated.
 */
export async function episodeWrites(rt: Runtime, scope: TenantScope, turn: Turn, extraction: Extraction, options: { newOwner?: boolean; episodeId?: string } = {}): Promise<EpisodeWrites> {
  const owner = memoryOwner(turn);
  const at = turn.at.toISOString();
  const episodeId = options.episodeId ?? newId('episode', turn.at.getTime());
  const base = { agentId: turn.agentId, userId: owner.userId, sessionId: owner.sessionId };

  const userNode = { ...base, kind: 'node' as const, id: nodeIdOf(turn.agentId, owner.userKey, USER_NORM), type: 'user', label: turn.userId ?? 'user', norm: USER_NORM, createdAt: at };
  const entityNodes = extraction.entities.map((e) => {
    const norm = normaliseLabel(e.label);
    return { ...base, kind: 'node' as const, id: nodeIdOf(turn.agentId, owner.userKey, norm), type: e.type, label: e.label, norm, createdAt: at };
  });
  const nodes = [userNode, ...entityNodes];
  // Only a turn that states facts needs the current ones (to skip repeats and find contradictions).
  const current =
    extraction.facts.length === 0 || options.newOwner
      ? []
      : ((await rt.store.memoryGraph.loadMemory(scope, owner.userKey, turn.agentId, 'edge')) as MemoryEdge[]).filter(isCurrent);

  const newEdges: MemoryEdge[] = [];
  const invalidations: Array<{ edge: MemoryEdge; by: string | null }> = [];
  for (const fact of extraction.facts) {
    const toId = nodeIdOf(turn.agentId, owner.userKey, normaliseLabel(fact.object.label));
    if (fact.negated) {
      for (const edge of current) if (edge.from === userNode.id && edge.relation === fact.relation && edge.to === toId) invalidations.push({ edge, by: null });
      continue;
    }
    if (current.some((e) => e.from === userNode.id && e.relation === fact.relation && e.to === toId)) continue;
    if (newEdges.some((e) => e.relation === fact.relation && e.to === toId)) continue;
    const edge: MemoryEdge = {
      ...base,
      kind: 'edge',
      id: newId('memoryEdge', turn.at.getTime()),
      from: userNode.id,
      to: toId,
      toLabel: fact.object.label,
      relation: fact.relation,
      fact: factText(fact.relation, fact.object.label),
      validAt: at,
      invalidAt: null,
      createdAt: at,
      expiredAt: null,
      episodeId,
      invalidatedBy: null,
    };
    for (const old of current) if (old.from === userNode.id && contradicts(old, fact.relation, toId, fact.object.label)) invalidations.push({ edge: old, by: edge.id });
    newEdges.push(edge);
  }

  const episode: MemoryEpisode = {
    kind: 'episode',
    id: episodeId,
    agentId: turn.agentId,
    userId: owner.userId,
    sessionId: turn.sessionId,
    text: turn.text,
    reply: turn.reply.slice(0, 2000),
    at,
    entityIds: entityNodes.map((n) => n.id),
    factIds: newEdges.map((e) => e.id),
  };
  const now = isoNow(rt.clock);
  const { memoryGraph } = rt.store;
  return {
    puts: [...(options.newOwner ? memoryGraph.newNodeWrites(scope, owner.userKey, nodes) : []), ...memoryGraph.memoryItemWrites(scope, owner.userKey, newEdges, [turn.agentId])],
    episodePut: memoryGraph.memoryItemWrites(scope, owner.userKey, [episode], []),
    update: async () => {
      await Promise.all([
        ...(options.newOwner ? [] : nodes.map((n) => memoryGraph.upsertNode(scope, owner.userKey, n))),
        ...invalidations.map(({ edge, by }) => memoryGraph.invalidateEdge(scope, owner.userKey, edge, { invalidAt: at, expiredAt: now, by })),
      ]);
    },
    episode,
    nodes: nodes.length,
    facts: newEdges.length,
    invalidated: invalidations.length,
  };
}

/**
 * Records one converse turn (see `episodeWrites`): its puts and updates, the episode last, so an
 * episode found means the turn was recorded whole (a queued extraction's redelivery checks it).
 */
export async function recordEpisode(rt: Runtime, scope: TenantScope, turn: Turn, extraction: Extraction = extractMemory(turn.text), options: { episodeId?: string } = {}) {
  const { puts, episodePut, update, episode, nodes, facts, invalidated } = await episodeWrites(rt, scope, turn, extraction, options);
  await Promise.all([rt.store.writeBatch(puts), update()]);
  await rt.store.writeBatch(episodePut);
  return { episode, nodes, facts, invalidated };
}
