/**
 * A memo of compile results bounded by count and by the regex programs its
 * results hold (regex/pattern-size.ts). A result holds the compiled
 * matchers of its `matches()` calls, up to megabytes for one expression of
 * large patterns; a count alone would let a few thousand such expressions
 * (saved or tested by any tenant) hold gigabytes. Oldest entries go first.
 */
export class BoundedMemo<T> {
  readonly #entries = new Map<string, { value: T; weight: number }>();
  readonly #maxEntries: number;
  readonly #maxWeight: number;
  #weight = 0;

  constructor(maxEntries: number, maxWeight: number) {
    this.#maxEntries = maxEntries;
    this.#maxWeight = maxWeight;
  }

  get(key: string): T | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Remembers `value`, unless it alone weighs more than the whole memo may. */
  set(key: string, value: T, weight: number): void {
    if (weight > this.#maxWeight) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) {
      this.#weight -= previous.weight;
      this.#entries.delete(key);
    }
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    while (this.#entries.size > this.#maxEntries || this.#weight > this.#maxWeight) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, { value: T; weight: number }];
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
  }

  /** Program size held now (tests). */
  get weight(): number {
    return this.#weight;
  }
}
