/**
 * One impact report at a time per tenant, in each process. A report may
 * replay for up to TUNING.impactReplayBudgetMs in time slices; slices yield
 * to validations, but every report running at once takes its share of the
 * CPU, so a tenant that asked for many at once would slow everyone's
 * validations for as long. A second report of a tenant whose report is
 * still running is refused (429, retry shortly) rather than queued: a
 * queued request would hold its connection for up to the budget of the one
 * before it, and the caller can retry as well as a queue could wait.
 *
 * Per process, like the replay itself: with several instances a tenant
 * can run one report on each.
 */
export class ImpactSlots {
  readonly #running = new Set<string>();

  /**
   * Takes the tenant's slot: a function that gives it back (call it once
   * the report is answered or failed), or undefined when the tenant's
   * report is already running here.
   *
   * @example
   * const release = slots.take(tenantId);
   * if (release === undefined) throw new ProblemError(PROBLEMS.impactReportRunning());
   * try { ... } finally { release(); }
   */
  take(tenantId: string): (() => void) | undefined {
    if (this.#running.has(tenantId)) return undefined;
    this.#running.add(tenantId);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running.delete(tenantId);
    };
  }
}
