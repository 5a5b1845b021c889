/**
 * Built standalone modules kept in memory: a build takes tens of
 * milliseconds of esbuild, and a ruleset version never changes, so the key
 * (the caller's: tenant, context, ruleset version) names the text forever.
 *
 * - Single flight: concurrent requests for one key share one build.
 * - Bounded: beyond `maxEntries` the least recently used module goes.
 * - A failed build is not remembered; the next request tries again.
 */

/** Default number of modules kept (they are tens to hundreds of KiB each). */
export const DEFAULT_MODULE_CACHE_SIZE = 32;

/** `T` is what is kept per key: the module's code (the default), or the caller's own form of it (the service's signed module). */
export class StandaloneModuleCache<T = string> {
  readonly #maxEntries: number;
  // Map order is recency order: a hit moves its key to the end.
  readonly #built = new Map<string, T>();
  readonly #building = new Map<string, Promise<T>>();

  constructor(maxEntries = DEFAULT_MODULE_CACHE_SIZE) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    this.#maxEntries = maxEntries;
  }

  /** Modules held now. */
  get size(): number {
    return this.#built.size;
  }

  /** The module for `key` when it is built (a use, as a hit of `get`), else undefined; builds nothing. */
  built(key: string): T | undefined {
    const built = this.#built.get(key);
    if (built !== undefined) {
      this.#built.delete(key);
      this.#built.set(key, built);
    }
    return built;
  }

  /**
   * The module for `key`, built with `build` on a miss.
   *
   * @example
   * const code = await cache.get(`${tenant}\u0000${context}\u0000${version}`, () => build().then((m) => m.code));
   */
  get(key: string, build: () => Promise<T>): Promise<T> {
    const built = this.built(key);
    if (built !== undefined) return Promise.resolve(built);
    const pending = this.#building.get(key);
    if (pending !== undefined) return pending;
    // Started on a later tick, so that the in-flight entry exists before
    // the build can settle (even when `build` throws at once).
    const started = Promise.resolve()
      .then(build)
      .then((code) => {
        this.#built.set(key, code);
        if (this.#built.size > this.#maxEntries) this.#built.delete(this.#built.keys().next().value!);
        return code;
      })
      .finally(() => this.#building.delete(key));
    this.#building.set(key, started);
    return started;
  }
}
