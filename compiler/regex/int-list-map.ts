/**
 * A map keyed by lists of integers (plus a small tag), by hash and exact
 * comparison: the subset construction looks up thousands of lists of NFA
 * instructions, and string keys (`join`) cost far more than hashing.
 */

interface Entry<V> {
  tag: number;
  list: readonly number[];
  value: V;
}

export class IntListMap<V> {
  readonly #buckets = new Map<number, Entry<V>[]>();

  /**
   * The value stored for `list` and `tag`, or undefined.
   *
   * @example
   * map.set([1, 2], 0, 'x'); map.get([1, 2], 0); // 'x'
   */
  get(list: readonly number[], tag: number): V | undefined {
    const bucket = this.#buckets.get(hash(list, tag));
    if (bucket === undefined) return undefined;
    for (const entry of bucket) if (entry.tag === tag && sameList(entry.list, list)) return entry.value;
    return undefined;
  }

  /** Stores `value` for `list` and `tag` (the list is kept, not copied). */
  set(list: readonly number[], tag: number, value: V): void {
    const key = hash(list, tag);
    const bucket = this.#buckets.get(key);
    const entry = { tag, list, value };
    if (bucket === undefined) this.#buckets.set(key, [entry]);
    else bucket.push(entry);
  }
}

/** FNV-1a over the integers, as a small integer (a Map key that stays unboxed). */
function hash(list: readonly number[], tag: number): number {
  let h = 0x811c9dc5 ^ tag;
  for (let i = 0; i < list.length; i++) h = Math.imul(h ^ list[i], 0x01000193);
  return h >>> 2;
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
