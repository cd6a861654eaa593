import { randomFillSync } from 'node:crypto';

export const ID_PREFIXES = {
  agent: 'agt_',
  knowledgeSource: 'ks_',
  workflow: 'wf_',
  execution: 'exe_',
  document: 'doc_',
  chunk: 'chk_',
  tenant: 'ten_',
  apiKey: 'key_',
  sync: 'syn_',
  compaction: 'cmp_',
  hook: 'hk_',
  upload: 'upl_',
  session: 'ses_',
  message: 'msg_',
  request: 'req_',
  token: 'tok_',
  record: 'rec_',
  memoryNode: 'mnd_',
  memoryEdge: 'med_',
  episode: 'epi_',
  evalDataset: 'eds_',
  evalCase: 'evc_',
  evalRun: 'evr_',
  run: 'run_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Random bytes drawn 4 KB at a time, as `randomUUID` keeps its own: one call into the CSPRNG per
 * 256 ids instead of one per id (every request and record gets an id).
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

/**
 * Time-ordered ids (ULID layout: 48-bit milliseconds then 80 random bits, Crockford base32,
 * lower case) so that a DynamoDB sort key on the id lists records in creation order. `now` is the
 * runtime's clock's time.
 */
export function newId(kind: IdKind, now: number): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  if (used + 16 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  let rand = '';
  for (let i = used; i < used + 16; i++) rand += CROCKFORD[pool[i]! % 32];
  used += 16;
  return `${ID_PREFIXES[kind]}${time}${rand}`;
}

/** An id derived from a digest (the same input, the same id), in the shape of the time-ordered ones. */
export function digestId(kind: IdKind, digest: Uint8Array): string {
  let body = '';
  for (let i = 0; i < 26; i++) body += CROCKFORD[digest[i]! % 32];
  return `${ID_PREFIXES[kind]}${body}`;
}

const ID_BODY = /^[0-9a-z]{26}$/;

/** Whether a string has the shape of an id of that kind (used to answer 404 early, without I/O). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = ID_PREFIXES[kind];
  return value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length));
}

/**
 * A session id as a caller may give it (Cairn's own are `ses_…`; a client may choose its own: an
 * A2A context, a workflow step's template, a converse request): 1–128 letters, digits, `_` or `-`.
 */
export const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
