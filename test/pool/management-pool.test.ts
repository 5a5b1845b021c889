/**
 * The management pool on real worker threads (started from the sources,
 * as the in-process test app starts them): tasks run there and come back
 * as plain data or as the problem to answer; a tenant past its bound is
 * refused before anything runs; tenants take turns for a thread; and a
 * task still running at its operation's budget is stopped with a refusal
 * saying how far it got. No timings are asserted, only orders and outcomes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import { ProblemError } from '../../src/errors.ts';
import { TUNING } from '../../src/tuning.ts';
import { ManagementPool, type ManagementPoolOptions, type TaskRunner } from '../../src/pool/management-pool.ts';
import type { RuleTestInput } from '../../src/pool/tasks/rule-test-task.ts';
import type { LiveRuleset } from '../../src/storage/types.ts';

const OPERATION = { name: 'rule test', unit: 'payload' };

let pool: ManagementPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

function startPool(options: Partial<ManagementPoolOptions> = {}): ManagementPool {
  pool = new ManagementPool({ threads: 1, workerMemoryMb: 256, operationsPerTenant: 2, timeBudgetMs: 60_000, ...options });
  return pool;
}

function ruleset(expression: string): LiveRuleset {
  return {
    tenantId: 'acme',
    context: 'c',
    rulesetVersion: 1,
    rules: [toRuleDefinition('R', { name: 'r', severity: 'Error', required: false, priority: 0, enabled: true, tags: [], fieldPath: 'a', expression })],
  };
}

function ruleTest(expression: string, payload: Record<string, unknown>): RuleTestInput {
  return {
    ruleset: ruleset(expression), payload, explain: false, pathPrefix: '', compilerLimits: {}, maxPayloadDepth: 64, maxAnswerBytes: 1 << 20,
  };
}

/** A payload the quadratic rule walks n^2 times. */
function pairs(n: number): Record<string, unknown> {
  return { a: Array.from({ length: n }, (_, i) => i) };
}

const QUADRATIC = 'a.every(x => a.every(y => y >= 0))';

/** Each thread of this process by its id, with its nice value (Linux keeps one per thread: /proc/self/task/<tid>/stat). */
function threadNiceValues(): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // After the command's name in parentheses: field 3 (state) onwards; nice is field 19.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nice.set(Number(tid), Number(fields[19 - 3]));
  }
  return nice;
}

async function refusal(promise: Promise<unknown>): Promise<ProblemError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ProblemError);
  return error as ProblemError;
}

describe('ManagementPool', () => {
  it('runs a task on a thread and answers its output, or the problem the task met', async () => {
    const threads = startPool();
    const output = await threads.operation('acme', OPERATION, (run) => run('ruleTest', ruleTest('a > 1', { a: 0 })));
    expect(output).toMatchObject({ isValid: false, totalRulesEvaluated: 1, failures: [expect.objectContaining({ ruleCode: 'R' })] });
    const problem = await refusal(threads.operation('acme', OPERATION, (run) => run('ruleTest', ruleTest('a >', { a: 0 }))));
    expect(problem).toMatchObject({ status: 400, code: 'INVALID_BODY', detail: 'The ruleset does not compile.' });
    expect(problem.errors?.[0]).toMatchObject({ path: 'expression' });
    expect(threads.running).toBe(0);
    expect(threads.queued).toBe(0);
  });

  it('refuses an operation of a tenant that has its most in flight, naming it, while another tenant\'s is admitted', async () => {
    const threads = startPool({ operationsPerTenant: 1 });
    let release: () => void = () => {};
    const held = threads.operation('acme', OPERATION, () => new Promise<void>((resolve) => {
      release = resolve;
    }));
    const problem = await refusal(threads.operation('acme', { name: 'stored-test run', unit: 'test' }, () => Promise.resolve()));
    expect(problem).toMatchObject({ status: 429, code: 'RATE_LIMITED', headers: { 'retry-after': '1' } });
    expect(problem.detail).toMatch(/^The stored-test run was not started: the tenant already has 1 heavy management operation/);
    expect(await threads.operation('globex', OPERATION, () => Promise.resolve('admitted'))).toBe('admitted');
    release();
    await held;
    expect(await threads.operation('acme', OPERATION, () => Promise.resolve('admitted again'))).toBe('admitted again');
  });

  it('serves tenants in turn: a tenant\'s backlog does not stand in front of another tenant\'s task', async () => {
    const threads = startPool({ threads: 1 });
    const finished: string[] = [];
    const task = (run: TaskRunner, label: string) => run('ruleTest', ruleTest(QUADRATIC, pairs(1500))).then(() => finished.push(label));
    const backlog = threads.operation('acme', OPERATION, (run) => Promise.all([1, 2, 3, 4].map((i) => task(run, `acme ${i}`))));
    // acme's first task is on the thread, three wait; then globex asks.
    expect(threads.running).toBe(1);
    expect(threads.queued).toBe(3);
    const other = threads.operation('globex', OPERATION, (run) => task(run, 'globex'));
    await Promise.all([backlog, other]);
    expect(finished).toEqual(['acme 1', 'globex', 'acme 2', 'acme 3', 'acme 4']);
  });

  it('stops a task still running at the operation\'s time budget, saying how far it got, and frees the thread', async () => {
    const threads = startPool({ timeBudgetMs: 4000 });
    // 3,000 tests of a few milliseconds each: each far below the evaluation deadline (1 s of wall time, which a
    // test of tens of milliseconds passed on a thread at the lowest priority in a loaded CI run), together far
    // above the budget, even on a thread kept warm by earlier tasks (whose optimized code ran 100 tests of 6,000
    // items within 4 s on Node 24). One payload for all: it crosses to the thread once.
    const payload = pairs(2500);
    const tests = Array.from({ length: 3000 }, (_, i) => ({ name: `t${i}`, payload, expect: { isValid: true } }));
    const problem = await refusal(threads.operation('acme', { name: 'stored-test run', unit: 'test' }, (run) => run('storedTests', {
      ruleset: ruleset(QUADRATIC), tests, explain: false, limits: { maxPayloadDepth: 64, maxAnswerBytes: 1 << 20 }, compilerLimits: {}, maxResultBytes: 1 << 20,
    })));
    expect(problem.status).toBe(409);
    expect(problem.code).toBe('LIMIT_EXCEEDED');
    expect(problem.detail).toMatch(/^The stored-test run stopped after 4 s, its time budget \(OPERATION_TIME_BUDGET_MS\), at test \d+ of 3000; nothing was changed\.$/);
    expect(threads.running).toBe(0);
    // A new thread takes the next task.
    expect(await threads.operation('acme', OPERATION, (run) => run('ruleTest', ruleTest('a > 1', { a: 2 })))).toMatchObject({ isValid: true });
  });

  it('starts no thread before its first task, then keeps the warm ones when idle and ends the others', async () => {
    const idleTimeoutMs = 50;
    const threads = startPool({ threads: 2, idleTimeoutMs });
    expect(threads.startedThreads).toBe(0);
    // Two tenants' tasks at once: the second may get a second thread (or wait for the first).
    const slow = (tenant: string) => threads.operation(tenant, OPERATION, (run) => run('ruleTest', ruleTest(QUADRATIC, pairs(3000))));
    await Promise.all([slow('acme'), slow('globex')]);
    expect(threads.startedThreads).toBeGreaterThan(0);
    // Long past the idle timeout: the threads beyond the warm ones have ended, the warm ones not.
    await new Promise((resolve) => setTimeout(resolve, 40 * idleTimeoutMs));
    expect(TUNING.warmThreads.value).toBeGreaterThan(0);
    expect(threads.startedThreads).toBe(Math.min(2, TUNING.warmThreads.value));
    expect(await threads.operation('acme', OPERATION, (run) => run('ruleTest', ruleTest('a > 1', { a: 2 })))).toMatchObject({ isValid: true });
  });

  it.runIf(process.platform === 'linux')('runs its threads at the lowest scheduling priority and leaves the event loop\'s as it was', async () => {
    const mainNice = getPriority();
    const lowest = TUNING.workerThreadNice.value;
    expect([...threadNiceValues().values()]).not.toContain(lowest);
    const threads = startPool();
    await threads.operation('acme', OPERATION, (run) => run('ruleTest', ruleTest('a > 1', { a: 0 })));
    const nice = threadNiceValues();
    expect([...nice.values()]).toContain(lowest);
    // The event loop (the thread whose id is the process's) answers validations at the priority it had.
    expect(nice.get(process.pid)).toBe(mainNice);
    expect(getPriority()).toBe(mainNice);
  });
});
