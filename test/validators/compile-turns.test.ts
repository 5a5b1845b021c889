/**
 * How compiles share the process: a compile's steps run in slices of time
 * with turns of the event loop between them (time-slices.ts), and a
 * tenant's compiles run one at a time (tenant-queue.ts).
 */
import { describe, expect, it } from 'vitest';
import { compileRulesetSteps } from '../../compiler/compile-ruleset.ts';
import { TURN } from '../../compiler/steps.ts';
import type { RuleDefinition } from '../../compiler/types.ts';
import { CompileLane } from '../../src/pool/compile-lane.ts';
import { buildValidator, compileValidator, installValidator, runAtOnce, type InstallFigures, type ValidatorBuild } from '../../src/validators/compile-validator.ts';
import { runInSlices, runInTurns } from '../../src/time-slices.ts';
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

describe('runInTurns', () => {
  it('ends a slice after a step that yields TURN, however short, and counts the slices', async () => {
    function* steps(): Generator<typeof TURN | void, string, void> {
      yield;
      yield TURN;
      yield;
      yield TURN;
      return 'done';
    }
    // A slice of an hour: only the TURNs end one.
    const taken = await runInTurns(steps(), 3_600_000);
    expect(taken).toMatchObject({ value: 'done', slices: 3 });
    expect(taken.longestSliceMs).toBeGreaterThanOrEqual(0);
  });
});

describe('installValidator', () => {
  // Three parts (128 rules a part), with patterns and schemas among the refs.
  const rules: RuleDefinition[] = Array.from({ length: 300 }, (_, i) => {
    if (i % 3 === 0) return { code: `P${i}`, name: `p${i}`, fieldPath: 'code', expression: `matches($value, "^(a|b)*c${i}$")`, message: `no match ${i}` };
    if (i % 3 === 1) return { code: `S${i}`, name: `s${i}`, fieldPath: 'item', schema: { type: 'object', required: [`k${i}`], properties: { [`k${i}`]: { type: 'integer', maximum: i } } } };
    return { code: `E${i}`, name: `e${i}`, fieldPath: 'n', expression: `$value != ${i}` };
  });
  const ruleset = { tenantId: 'acme', context: 'large', rulesetVersion: 1, rules };
  const payloads = [{}, { code: 'ab', item: { k1: 'x' }, n: 2 }, { code: 'abc3', item: { k1: 9, k4: 2 }, n: 5 }];

  it('installs a build from another thread a part a turn, into the validator compiling at once makes', async () => {
    const compiled = await compileValidator(ruleset, {}, runAtOnce);
    // What crosses threads is a structured clone.
    const build = structuredClone(await buildValidator(ruleset, {}));
    let figures: InstallFigures | undefined;
    const installed = await installValidator(ruleset, build, (reported) => {
      figures = reported;
    });
    expect(figures).toMatchObject({ parts: 3 });
    expect(figures!.slices).toBeGreaterThanOrEqual(2 * 3 + 1);
    const now = Date.now();
    for (const payload of payloads) {
      // Failure order, paths and messages alike.
      expect(installed.validator!.validate(payload, now)).toEqual(compiled.validator!.validate(payload, now));
    }
    expect(installed.validator!.validate(payloads[1], now).failures.length).toBeGreaterThan(100);
    expect(installed.validator!.source).toBe(compiled.validator!.source);
  });

  it("evaluates every part from the compile lane's code cache, and from source when V8 rejects a cache", async () => {
    const lane = new CompileLane({ threads: 1, workerMemoryMb: 256 });
    try {
      // Rulesets of the same shape with text of their own: a script V8 has compiled once in this thread
      // (the test above installed `ruleset`) is found by its text in V8's own cache, before any code cache is looked at.
      const renamed = (suffix: string) => ({ ...ruleset, rules: rules.map((rule) => ({ ...rule, name: `${rule.name} (${suffix})` })) });
      const [one, other] = [renamed('one'), renamed('other')];
      const [build, otherBuild] = await Promise.all([lane.compile(one, {}, 'change'), lane.compile(other, {}, 'change')]);
      const caches = build.generated!.codeCache!;
      // One cache per part, each made after the part ran once.
      expect(caches).toHaveLength(3);
      for (const cache of caches) expect(cache!.byteLength).toBeGreaterThan(1000);
      const install = async (from: ValidatorBuild, codeCache: (Uint8Array | null)[]) => {
        let figures: InstallFigures | undefined;
        const installed = await installValidator(one, { ...from, generated: { ...from.generated!, codeCache } }, (reported) => {
          figures = reported;
        });
        return { validator: installed.validator!, use: figures!.codeCache };
      };
      // A cache V8 cannot use (zeroed bytes) is refused, and the part compiles as without one.
      const damaged = await install(build, caches.map((cache) => new Uint8Array(cache!.byteLength)));
      expect(damaged.use).toEqual({ used: 0, rejected: 3 });
      const cached = await install(otherBuild, otherBuild.generated!.codeCache!);
      expect(cached.use).toEqual({ used: 3, rejected: 0 });
      const compiled = await compileValidator(one, {}, runAtOnce);
      const compiledOther = await compileValidator(other, {}, runAtOnce);
      const now = Date.now();
      for (const payload of payloads) {
        expect(damaged.validator.validate(payload, now)).toEqual(compiled.validator!.validate(payload, now));
        expect(cached.validator.validate(payload, now)).toEqual(compiledOther.validator!.validate(payload, now));
      }
      expect(cached.validator.source).toBe(compiledOther.validator!.source);
    } finally {
      await lane.close();
    }
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
