/**
 * How compiles share the process: a compile's steps run in slices of time
 * with turns of the event loop between them (time-slices.ts), and a
 * tenant's compiles run one at a time (tenant-queue.ts).
 */
import { describe, expect, it } from 'vitest';
import { compileRulesetSteps } from '../../compiler/compile-ruleset.ts';
import { runInSlices } from '../../src/validators/time-slices.ts';
import { TenantQueue } from '../../src/validators/tenant-queue.ts';

/** Steps that each keep the CPU busy for `ms`. */
function* busySteps(count: number, ms: number): Generator<void, number, void> {
  for (let i = 0; i < count; i++) {
    const until = performance.now() + ms;
    while (performance.now() < until) { /* busy */ }
    yield;
  }
  return count;
}

describe('runInSlices', () => {
  it('lets timers run while a long run of steps goes on, and returns its result', async () => {
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), 1);
    const started = performance.now();
    const result = await runInSlices(busySteps(60, 5), 10);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(result).toBe(60);
    // 300 ms of work; a run that never yielded would let the timer fire at most once.
    expect(ticks.length).toBeGreaterThan(10);
    const gaps = ticks.slice(1).map((t, i) => t - ticks[i]);
    expect(Math.max(...gaps)).toBeLessThan(elapsed / 4);
  });

  it('builds the same validator as compiling at once', async () => {
    const rules = Array.from({ length: 200 }, (_, i) => ({ code: `R${i}`, name: `r${i}`, fieldPath: 'n', expression: `$value != ${i}` }));
    const compiled = await runInSlices(compileRulesetSteps(rules), 1);
    expect(compiled.errors).toEqual([]);
    expect(compiled.validate({ n: 7 }, Date.now()).failures.map((f) => f.ruleCode)).toEqual(['R7']);
  });

  it('passes on what the steps throw', async () => {
    function* failing(): Generator<void, never, void> {
      yield;
      throw new Error('broken step');
    }
    await expect(runInSlices(failing())).rejects.toThrow('broken step');
  });
});

describe('TenantQueue', () => {
  const later = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  it("runs one tenant's tasks one after another, in order, and other tenants' alongside", async () => {
    const queue = new TenantQueue();
    const log: string[] = [];
    const task = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      await later(ms);
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([
      queue.run('acme', task('a1', 30)),
      queue.run('acme', task('a2', 10)),
      queue.run('globex', task('g1', 5)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'g1']);
    // acme's second task waited for its first; globex's ran while acme's first did.
    expect(log.indexOf('a2 start')).toBeGreaterThan(log.indexOf('a1 end'));
    expect(log.indexOf('g1 end')).toBeLessThan(log.indexOf('a1 end'));
    expect(queue.busyTenants).toBe(0);
  });

  it('goes on after a task fails, and hands the failure to its caller only', async () => {
    const queue = new TenantQueue();
    const failed = queue.run('acme', () => Promise.reject(new Error('compile failed')));
    const next = queue.run('acme', () => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('compile failed');
    await expect(next).resolves.toBe('next');
  });
});
