/**
 * The per-tenant queue in front of the management threads: one tenant's
 * backlog never stands in front of another tenant's next item.
 */
import { describe, expect, it } from 'vitest';
import { TenantFairQueue } from '../../src/pool/tenant-fair-queue.ts';

function drain(queue: TenantFairQueue<string>): string[] {
  const taken: string[] = [];
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) taken.push(item);
  return taken;
}

describe('TenantFairQueue', () => {
  it('serves tenants in turn, each tenant\'s items in the order they came', () => {
    const queue = new TenantFairQueue<string>();
    for (const item of ['a1', 'a2', 'a3', 'a4']) queue.push('a', item);
    queue.push('b', 'b1');
    queue.push('c', 'c1');
    queue.push('b', 'b2');
    expect(queue.size).toBe(7);
    expect(queue.waiting('a')).toBe(4);
    expect(drain(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(queue.size).toBe(0);
  });

  it('puts a tenant that comes while another\'s backlog is served next, not behind the backlog', () => {
    const queue = new TenantFairQueue<string>();
    queue.push('a', 'a1');
    expect(queue.shift()).toBe('a1');
    for (const item of ['a2', 'a3', 'a4']) queue.push('a', item);
    queue.push('b', 'b1');
    queue.push('b', 'b2');
    expect(drain(queue)).toEqual(['b1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('starts a tenant that was idle at the turn being served, with no credit for the turns it missed', () => {
    const queue = new TenantFairQueue<string>();
    for (const item of ['a1', 'a2', 'a3']) queue.push('a', item);
    expect(queue.shift()).toBe('a1');
    expect(queue.shift()).toBe('a2');
    queue.push('b', 'b1');
    queue.push('b', 'b2');
    queue.push('b', 'b3');
    // b1 takes the current turn (a2's), then the two tenants alternate.
    expect(drain(queue)).toEqual(['b1', 'a3', 'b2', 'b3']);
  });

  it('takes out an item whose caller gave up, and only once', () => {
    const queue = new TenantFairQueue<string>();
    queue.push('a', 'a1');
    queue.push('a', 'a2');
    queue.push('b', 'b1');
    expect(queue.remove('a', 'a1')).toBe(true);
    expect(queue.remove('a', 'a1')).toBe(false);
    expect(queue.remove('c', 'c1')).toBe(false);
    expect(queue.size).toBe(2);
    // a2 keeps its turn, after b1's.
    expect(drain(queue)).toEqual(['b1', 'a2']);
  });
});
