/**
 * One compile at a time per tenant. Compiles of different tenants share
 * the compile lane's threads (src/pool/compile-lane.ts); a tenant that starts
 * many at once (publishes, recompiles, rule tests of large contexts) has
 * them run one after another, so it cannot hold the memory of many
 * compiles in flight, nor take a larger share of the process from other
 * tenants by asking more often.
 */
export class TenantQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after the tenant's tasks queued before it; its outcome is the task's. */
  run<T>(tenantId: string, task: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(tenantId) ?? Promise.resolve();
    const result = before.then(task);
    // The tail never rejects: a failed task does not fail the ones queued behind it.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(tenantId, tail);
    void tail.then(() => {
      if (this.#tails.get(tenantId) === tail) this.#tails.delete(tenantId);
    });
    return result;
  }

  /** Tenants with a task queued or running (tests). */
  get busyTenants(): number {
    return this.#tails.size;
  }
}
