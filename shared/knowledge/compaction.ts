import { ConflictError, NotFoundError } from '../errors';
import { newId } from '../ids';
import { log } from '../log';
import { storedFrequencies } from '../search/indexing';
import { layoutTerm } from '../search/impact-blocks';
import { indexTuning } from '../search/index-tuning';
import { isDeleted, SEGMENT_SPAN, type AnalyzedChunkRecord, type CompactionRecord, type SegmentRecord, type SegmentSums } from '../store/search-index';
import { accessBuilder, chunkClasses, type AccessList } from '../store/segment-access';
import type { TenantScope } from '../tenancy';
import type { Runtime } from '../runtime';
import { knowledgeSources, type KnowledgeSourceRecord } from './sources';

/**
 * Compaction: a source's live segments merged into a few new ones without their deleted chunks,
 * swapped in with one transaction, the old items removed after a grace period. Every sync adds
 * segments and every changed document leaves deleted chunks behind; compaction keeps a search's
 * reads proportional to the live corpus.
 *
 * A compaction holds the source's `compaction` lease while it writes and swaps: a sync that
 * starts meanwhile waits for it, so the merged segments cannot miss a tombstone (and the swap
 * checks each old segment's version anyway). Each step is idempotent: the plan fixes which
 * segments merge and the new segment numbers, new chunk numbers follow from the plan alone, and
 * the plan's state says what is done, so redelivery and crashes redo the same.
 */

/** How long a compaction may hold a source before a sync may go ahead regardless. */
const LEASE_MS = 30 * 60_000;
/** Segments merged per compaction (a transaction holds 100 items: old, new, the plan). */
const MAX_MERGED = 90;
/** Live chunks one compaction copies at most: bounds its time in a worker (five minutes in AWS) and its memory. */
const MAX_COPIED = 200_000;

export function compactionActive(source: KnowledgeSourceRecord, now: number): boolean {
  return source.compaction !== undefined && Date.parse(source.compaction.until) > now;
}

/**
 * The segments worth merging: those under half a compacted segment's size, and those with more
 * than the deleted share. A full segment with few deletions is left as it is: merging it again
 * would copy it for nothing (and a large source would copy all of itself on every compaction).
 */
function mergeable(segments: SegmentRecord[]): SegmentRecord[] {
  return segments.filter(
    (s) => s.state === 'live' && (s.chunks - s.deletedCount < indexTuning.segmentChunks / 2 || s.deletedCount / Math.max(1, s.chunks) > indexTuning.compactAfterDeletedShare),
  );
}

/** Whether a source's segments call for compaction (too many small ones, or too much deleted). */
export function needsCompaction(segments: SegmentRecord[]): boolean {
  const live = segments.filter((s) => s.state === 'live');
  const chunks = live.reduce((n, s) => n + s.chunks, 0);
  const deleted = live.reduce((n, s) => n + s.deletedCount, 0);
  const small = live.filter((s) => s.chunks - s.deletedCount < indexTuning.segmentChunks / 2);
  return small.length > indexTuning.compactAfterSegments || (deleted >= indexTuning.compactAfterDeletedChunks && deleted / chunks > indexTuning.compactAfterDeletedShare);
}

/** Takes the source's compaction lease and queues the work; 409 when it is syncing or compacting. */
export async function requestCompaction(rt: Runtime, scope: TenantScope, sourceId: string): Promise<{ compactionId: string; source: KnowledgeSourceRecord }> {
  const compactionId = newId('compaction', rt.clock.now());
  const now = rt.clock.now();
  const source = await knowledgeSources.update(rt, scope, sourceId, (current) => {
    if (current.status !== 'ready') throw new ConflictError(`Knowledge source ${sourceId} is ${current.status}: it can be compacted when ready`, { status: current.status });
    if (compactionActive(current, now)) throw new ConflictError(`Knowledge source ${sourceId} is being compacted`, { compactionId: current.compaction!.id });
    return { ...current, compaction: { id: compactionId, startedAt: new Date(now).toISOString(), until: new Date(now + LEASE_MS).toISOString() } };
  });
  if (!source) throw new NotFoundError('knowledge source', sourceId);
  await rt.queues.ingestion.send([{ type: 'compact', tenantId: scope.tenantId, sourceId, compactionId }]);
  return { compactionId, source };
}

/** After a sync: compacts when the segments call for it (a compaction already running is left be). */
export async function compactIfNeeded(rt: Runtime, scope: TenantScope, sourceId: string, segments: SegmentRecord[]): Promise<void> {
  if (!needsCompaction(segments)) return;
  try {
    const { compactionId } = await requestCompaction(rt, scope, sourceId);
    log.info('compaction queued', { sourceId, compactionId, segments: segments.length });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
}

async function release(rt: Runtime, scope: TenantScope, sourceId: string, compactionId: string) {
  await knowledgeSources.update(rt, scope, sourceId, (current) => {
    if (current.compaction?.id !== compactionId) return current;
    const { compaction: _done, ...rest } = current;
    return rest;
  });
}

/** Old chunk number → new one, from the plan alone: live chunks in order, packed into the new segments. */
function renumbering(plan: CompactionRecord): Map<number, number> {
  const map = new Map<number, number>();
  let next = 0;
  for (const old of plan.old) {
    for (let local = 0; local < old.chunks; local++) {
      if (isDeleted(old.deleted, local)) continue;
      const segNo = plan.segNos[Math.floor(next / indexTuning.segmentChunks)]!;
      map.set(old.segNo * SEGMENT_SPAN + local, segNo * SEGMENT_SPAN + (next % indexTuning.segmentChunks));
      next++;
    }
  }
  return map;
}

async function plan(rt: Runtime, scope: TenantScope, sourceId: string, compactionId: string): Promise<CompactionRecord | undefined> {
  const existing = await rt.store.searchIndex.getCompaction(scope, sourceId, compactionId);
  if (existing) return existing;
  const candidates = mergeable(await rt.store.searchIndex.readSegments(scope, sourceId));
  // The smallest segments first (merging them gains most per chunk copied), up to what one run copies.
  const merged: SegmentRecord[] = [];
  let copied = 0;
  for (const s of candidates.sort((a, b) => a.chunks - a.deletedCount - (b.chunks - b.deletedCount) || a.segNo - b.segNo)) {
    if (merged.length === MAX_MERGED || (merged.length > 1 && copied + s.chunks - s.deletedCount > MAX_COPIED)) break;
    merged.push(s);
    copied += s.chunks - s.deletedCount;
  }
  merged.sort((a, b) => a.segNo - b.segNo);
  if (merged.length === 0 || (merged.length === 1 && merged[0]!.deletedCount === 0)) return undefined;
  const liveChunks = merged.reduce((n, s) => n + s.chunks - s.deletedCount, 0);
  const count = Math.max(1, Math.ceil(liveChunks / indexTuning.segmentChunks));
  const base = await rt.store.searchIndex.reserveSegments(scope, sourceId, count);
  return rt.store.searchIndex.beginCompaction(scope, sourceId, {
    compactionId,
    state: 'writing',
    old: merged.map((s) => ({ segNo: s.segNo, chunks: s.chunks, version: s.version, ...(s.deleted ? { deleted: s.deleted } : {}) })),
    segNos: Array.from({ length: count }, (_, i) => base + i),
    createdAt: new Date(rt.clock.now()).toISOString(),
  });
}

/** Copies the live chunks of the old segments into the new ones (not live yet); their sums. */
async function writeMerged(rt: Runtime, scope: TenantScope, sourceId: string, plan: CompactionRecord) {
  const map = renumbering(plan);
  const sums: SegmentSums[] = [];
  // Who may read each chunk goes with it: the old segments' lists as they stand (one changed since the plan fails the swap).
  const current = new Map((await rt.store.searchIndex.readSegments(scope, sourceId)).map((s) => [s.segNo, s]));
  let writer: { segNo: number; write: ReturnType<typeof rt.store.searchIndex.segmentWriter>; access: Array<AccessList | undefined> } | undefined;
  const finish = async () => {
    if (!writer) return;
    const access = accessBuilder();
    for (let local = 0; local < writer.access.length; local++) access.add(1, writer.access[local]);
    sums.push({ segNo: writer.segNo, ...(await writer.write.finish()), access: access.build() });
  };
  for (const old of plan.old) {
    const moved: AnalyzedChunkRecord[] = [];
    const oldAccess = current.get(old.segNo)?.access;
    const classes = chunkClasses(oldAccess, old.chunks);
    for (const chunk of await rt.store.searchIndex.readSegmentChunks(scope, sourceId, old.segNo)) {
      const docNo = map.get(Number(chunk.docNo));
      if (docNo === undefined) continue; // deleted
      const segNo = Math.floor(docNo / SEGMENT_SPAN);
      if (writer?.segNo !== segNo) {
        await writer?.write.add(moved.splice(0));
        await finish();
        await rt.store.searchIndex.beginSegment(scope, sourceId, { segNo, syncId: plan.compactionId });
        writer = { segNo, write: rt.store.searchIndex.segmentWriter(scope, sourceId, segNo, layoutTerm), access: [] };
      }
      const cls = classes[Number(chunk.docNo) - old.segNo * SEGMENT_SPAN] ?? 0;
      writer.access[docNo - segNo * SEGMENT_SPAN] = cls ? oldAccess!.classes[cls - 1] : undefined;
      const { titleTf, bodyTf } = storedFrequencies(chunk);
      moved.push({ ...chunk, docNo, titleTf, bodyTf });
    }
    await writer?.write.add(moved);
  }
  await finish();
  return { sums, map };
}

/** Runs (or resumes) one compaction. */
export async function handleCompaction(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord, compactionId: string): Promise<void> {
  const existing = await rt.store.searchIndex.getCompaction(scope, source.id, compactionId);
  if (existing?.state === 'cleanup') return cleanup(rt, scope, source.id, existing);
  if (existing?.state === 'done' || existing?.state === 'abandoned') return;
  if (existing?.state !== 'swapped' && source.compaction?.id !== compactionId) return; // its lease was given up
  const current = await plan(rt, scope, source.id, compactionId);
  if (!current) return release(rt, scope, source.id, compactionId);
  const started = performance.now();
  let map: Map<number, number>;
  if (current.state === 'writing') {
    const written = await writeMerged(rt, scope, source.id, current);
    map = written.map;
    if (!(await rt.store.searchIndex.swapSegments(scope, source.id, current, written.sums))) {
      // Another delivery of this message swapped first: carry on from there.
      const now = await rt.store.searchIndex.getCompaction(scope, source.id, compactionId);
      if (now?.state !== 'writing') return handleCompaction(rt, scope, source, compactionId);
      // An old segment changed since the plan (which the lease should prevent): give up cleanly.
      log.warn('compaction abandoned: the index changed', { sourceId: source.id, compactionId });
      await rt.store.searchIndex.setCompactionState(scope, source.id, compactionId, 'abandoned');
      await discard(rt, scope, source.id, current.segNos);
      return release(rt, scope, source.id, compactionId);
    }
  } else map = renumbering(current);
  // The documents now name their chunks' new numbers (a later sync replaces or deletes them by these).
  const documents = await rt.store.searchIndex.listDocuments(scope, source.id);
  const moved = documents.filter((d) => d.chunks.some((c) => map.has(c.docNo)));
  await rt.store.searchIndex.writeDocuments(scope, source.id, moved.map((d) => ({ ...d, chunks: d.chunks.map((c) => ({ ...c, docNo: map.get(c.docNo) ?? c.docNo })) })));
  await rt.store.searchIndex.setCompactionState(scope, source.id, compactionId, 'cleanup');
  await release(rt, scope, source.id, compactionId);
  await rt.queues.ingestion.send([{ type: 'compact', tenantId: scope.tenantId, sourceId: source.id, compactionId }], { delaySeconds: indexTuning.compactionGraceSeconds });
  log.info('compaction swapped in', { sourceId: source.id, compactionId, merged: current.old.length, segments: current.segNos.length, chunks: map.size, ms: Math.round(performance.now() - started) });
}

/** Removes the merged segments' chunks and postings, then compacts again if segments remain to merge. */
async function cleanup(rt: Runtime, scope: TenantScope, sourceId: string, plan: CompactionRecord) {
  const segNos = plan.old.map((o) => o.segNo);
  await rt.store.searchIndex.deleteSegmentPostings(scope, sourceId, segNos);
  await rt.store.searchIndex.deleteChunks(scope, sourceId, plan.old.flatMap((o) => Array.from({ length: o.chunks }, (_, local) => o.segNo * SEGMENT_SPAN + local)));
  await rt.store.searchIndex.setCompactionState(scope, sourceId, plan.compactionId, 'done');
  const source = await knowledgeSources.find(rt, scope, sourceId);
  if (source?.status === 'ready') await compactIfNeeded(rt, scope, sourceId, await rt.store.searchIndex.readSegments(scope, sourceId));
}

/** Removes segments a compaction wrote but never swapped in. */
async function discard(rt: Runtime, scope: TenantScope, sourceId: string, segNos: number[]) {
  await rt.store.searchIndex.deleteSegmentPostings(scope, sourceId, segNos);
  const chunks = (await Promise.all(segNos.map((segNo) => rt.store.searchIndex.readSegmentChunks(scope, sourceId, segNo)))).flat();
  await rt.store.searchIndex.deleteChunks(scope, sourceId, chunks.map((c) => Number(c.docNo)));
  await rt.store.searchIndex.deleteSegmentItems(scope, sourceId, segNos);
}
