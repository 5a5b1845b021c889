/**
 * Suggestions for paths the payload schema does not declare: each unknown
 * key is replaced by the nearest key declared at the same place, segment by
 * segment, so `custmer.emial` becomes `customer.email`. Nearness is the
 * edit distance with transpositions (optimal string alignment); a key that
 * differs only in case is always near.
 */
import type { PathSegment } from '../paths.ts';
import type { PayloadSchema } from './payload-schema-paths.ts';

/**
 * Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`,
 * or `limit + 1` as soon as it must exceed `limit`.
 *
 * @example
 * editDistance('emial', 'email', 2); // 1
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Int32Array(b.length + 1);
  let previous = new Int32Array(b.length + 1);
  let current = new Int32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        d = Math.min(d, before[j - 2] + 1);
      }
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length], limit + 1);
}

/** How many edits still read as a slip of the keyboard for a key of this length. */
function allowedEdits(key: string): number {
  return key.length <= 2 ? 0 : Math.max(1, Math.floor(key.length / 3));
}

/**
 * The declared key nearest to `key`, or undefined when none is near.
 *
 * @example
 * closestKey('incme', ['name', 'income']); // 'income'
 */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const limit = allowedEdits(key);
  const lower = key.toLowerCase();
  let found: string | undefined;
  let foundDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === key || Math.abs(candidate.length - key.length) > limit) continue;
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(key, candidate, limit);
    if (distance <= limit && distance < foundDistance) {
      found = candidate;
      foundDistance = distance;
    }
  }
  return found;
}

/**
 * The path with each undeclared key from index `from` on replaced by its
 * nearest declared key, when that gives a declared path; else undefined.
 *
 * @example
 * closestPath(schema, [{ key: 'applicant' }, { key: 'incme' }], 0); // [applicant, income]
 */
export function closestPath(
  schema: PayloadSchema,
  segments: readonly PathSegment[],
  from: number,
): PathSegment[] | undefined {
  const path = [...segments];
  // Each round fixes one segment further along, so there are at most as many rounds as segments.
  for (let round = 0; round <= path.length; round++) {
    const found = schema.lookup(path);
    if (found.status !== 'undeclared') return round === 0 ? undefined : path;
    const segment = path[found.at];
    if (found.at < from || found.parentTypes !== undefined || segment === undefined || !('key' in segment)) return undefined;
    const key = closestKey(segment.key, schema.keysAt(path.slice(0, found.at)));
    if (key === undefined) return undefined;
    path[found.at] = { key };
  }
  return undefined;
}
