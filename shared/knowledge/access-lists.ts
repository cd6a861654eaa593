import { createHash } from 'node:crypto';
import { END_USER_ID, GROUP_NAME } from '../identity';
import { accessKey, canonicalAccess, type AccessList } from '../store/segment-access';

/** Access lists as sources give them, and in a document's hash. */

/** A document's hash with its list: a list that changed makes the document look changed to the next sync. */
export function hashWithAccess(hash: string, access: AccessList | undefined): string {
  if (!access) return hash;
  return `${hash}:${createHash('sha256').update(accessKey(access)).digest('hex').slice(0, 16)}`;
}

/**
 * A list as sources write it: `user:<id>` and `group:<name>` entries, in a text array, a JSON
 * array, or a comma- or space-separated string. Anything else in it is left out (and logged by the caller).
 */
export function accessFromEntries(value: unknown): { access?: AccessList; ignored: number } {
  let entries: unknown = value;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) {
      try {
        entries = JSON.parse(text);
      } catch {
        entries = [];
      }
    } else entries = text.split(/[\s,]+/).filter(Boolean);
  }
  if (entries === null || entries === undefined) return { ignored: 0 };
  if (!Array.isArray(entries)) return { access: { users: [], groups: [] }, ignored: 1 };
  const access: AccessList = { users: [], groups: [] };
  let ignored = 0;
  for (const entry of entries) {
    const match = typeof entry === 'string' ? /^(user|group):(.+)$/.exec(entry.trim()) : null;
    if (!match || !(match[1] === 'user' ? END_USER_ID : GROUP_NAME).test(match[2]!)) ignored++;
    else (match[1] === 'user' ? access.users : access.groups).push(match[2]!);
  }
  // A list was given: even when nothing in it was usable, the document is readable by nobody it did not name.
  return { access: canonicalAccess(access), ignored };
}

