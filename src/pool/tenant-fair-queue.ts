/**
 * Waiting work, one queue per tenant, served fairly (start-time fair
 * queuing): each item gets a turn number when it comes, one after its
 * tenant's previous item, but never before the turn now being served; the
 * next item taken is the one with the lowest turn (the oldest among equals).
 * A tenant that queues a hundred items thus takes turns 1..100, and a tenant
 * that comes meanwhile takes the next turn of its own, so it waits behind
 * at most the items already running, never the other tenant's backlog.
 */
interface Waiting<T> {
  item: T;
  turn: number;
  arrival: number;
}

interface TenantLine<T> {
  items: Waiting<T>[];
  /** The turn of the tenant's newest item. */
  lastTurn: number;
}

export class TenantFairQueue<T> {
  readonly #byTenant = new Map<string, TenantLine<T>>();
  // The turn of the item taken last: a tenant that was idle starts there.
  #turn = 0;
  #arrivals = 0;
  #size = 0;

  /** Items waiting, all tenants together. */
  get size(): number {
    return this.#size;
  }

  /** Items the tenant has waiting. */
  waiting(tenantId: string): number {
    return this.#byTenant.get(tenantId)?.items.length ?? 0;
  }

  push(tenantId: string, item: T): void {
    let line = this.#byTenant.get(tenantId);
    if (line === undefined) {
      line = { items: [], lastTurn: -1 };
      this.#byTenant.set(tenantId, line);
    }
    const turn = line.lastTurn < this.#turn ? this.#turn : line.lastTurn + 1;
    line.lastTurn = turn;
    line.items.push({ item, turn, arrival: this.#arrivals++ });
    this.#size++;
  }

  /** The next item in turn, or undefined when none waits. */
  shift(): T | undefined {
    let next: TenantLine<T> | undefined;
    for (const line of this.#byTenant.values()) {
      const head = line.items[0];
      if (head === undefined) continue;
      const best = next?.items[0];
      if (best === undefined || head.turn < best.turn || (head.turn === best.turn && head.arrival < best.arrival)) next = line;
    }
    if (next === undefined) return undefined;
    const taken = next.items.shift()!;
    this.#size--;
    this.#turn = taken.turn;
    this.#forgetIdle();
    return taken.item;
  }

  /** Takes an item out of the queue before its turn (its caller gave up); false when it was not waiting. */
  remove(tenantId: string, item: T): boolean {
    const items = this.#byTenant.get(tenantId)?.items;
    const index = items?.findIndex((waiting) => waiting.item === item) ?? -1;
    if (items === undefined || index < 0) return false;
    items.splice(index, 1);
    this.#size--;
    return true;
  }

  /** Tenants with nothing waiting whose turns are all past: they would start from the current turn anyway. */
  #forgetIdle(): void {
    for (const [tenantId, line] of this.#byTenant) {
      if (line.items.length === 0 && line.lastTurn < this.#turn) this.#byTenant.delete(tenantId);
    }
  }
}
