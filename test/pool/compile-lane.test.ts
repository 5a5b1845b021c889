/**
 * The compile lane's two priorities: compiles that validations wait for
 * run on threads at the default scheduling priority, lifecycle compiles
 * (publish, rollback, import) on threads of their own, niced like the
 * management threads, so that neither waits for the other and a large
 * publish's compile runs in what the event loop leaves of the cores.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuleDefinition } from '../../compiler/types.ts';
import { CompileLane } from '../../src/pool/compile-lane.ts';
import { TUNING } from '../../src/tuning.ts';

/** The nice value of each thread of this process (Linux keeps one per thread). */
function threadNiceValues(): number[] {
  const values: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // After the command's name in parentheses: field 3 (state) onwards; nice is field 19.
      values.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19 - 3]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return values;
}

function ruleset(context: string, count: number) {
  const rules: RuleDefinition[] = Array.from({ length: count }, (_, i) => ({
    code: `R${i}`, name: `rule ${i}`, fieldPath: 'code', expression: `$value != "v${i}" && !matches($value, "^(a|b)*c${i}$")`,
  }));
  return { tenantId: 'acme', context, rulesetVersion: 1, rules };
}

describe('CompileLane', () => {
  let lane: CompileLane | undefined;
  afterEach(async () => {
    await lane?.close();
    lane = undefined;
  });

  it.runIf(process.platform === 'linux')('compiles for validations at the default priority and for lifecycle operations on niced threads', async () => {
    const mainNice = getPriority();
    const niced = TUNING.workerThreadNice.value;
    expect(threadNiceValues()).not.toContain(niced);
    lane = new CompileLane({ threads: 1, workerMemoryMb: 256 });
    const cold = await lane.compile(ruleset('cold', 3), {}, 'validation');
    expect(cold.errors).toEqual([]);
    expect(threadNiceValues(), 'a compile for validations ran on a niced thread').not.toContain(niced);
    const published = await lane.compile(ruleset('published', 3), {}, 'change');
    expect(published.errors).toEqual([]);
    expect(threadNiceValues()).toContain(niced);
    expect(lane.startedThreads).toBe(2);
    expect(getPriority()).toBe(mainNice);
  });

  it("compiles a cold context while a lifecycle operation's large compile runs", async () => {
    lane = new CompileLane({ threads: 1, workerMemoryMb: 256 });
    const finished: string[] = [];
    const large = lane.compile(ruleset('large', 2000), {}, 'change').then(() => finished.push('large'));
    // The large compile has its thread first; the cold one does not queue behind it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cold = lane.compile(ruleset('cold', 2), {}, 'validation').then(() => finished.push('cold'));
    await Promise.all([large, cold]);
    expect(finished).toEqual(['cold', 'large']);
  }, 60_000);
});
