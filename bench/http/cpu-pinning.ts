/**
 * Cores of their own for the server under test and the load generator.
 *
 * On a small machine the load generator (autocannon, in the benchmark's
 * own process) and the server share the cores with everything else, and
 * the scheduler moves them around: the same server measured 0.57 and 0.77
 * of the bare route in runs minutes apart. Pinned, the server to one core
 * and the load generator to another, the rounds of one run agree within a
 * few percent and runs agree with each other (bench/README.md). Both the
 * service and the bare route are pinned the same way, so the ratio stays a
 * like-for-like comparison.
 *
 * Uses `taskset` (util-linux); without it, with one core, or with
 * BENCH_PIN=0, nothing is pinned and the results say so.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

export interface CpuPinning {
  /** A command prefix that starts a server on its core, or undefined (not pinned). */
  readonly serverWrapper: string[] | undefined;
  /** Shown with the results. */
  readonly description: string;
  /** Gives this process its cores back (processes started later inherit them). */
  restore(): void;
}

const SERVER_CPU = 1;
const LOAD_CPU = 0;

function taskset(args: string[]): string | undefined {
  const result = spawnSync('taskset', args, { encoding: 'utf8' });
  return result.status === 0 ? result.stdout : undefined;
}

/**
 * Pins this process (the load generator) to core 0 and returns the prefix
 * that starts servers on core 1.
 *
 * @example
 * const pinning = pinLoadGenerator();
 * const server = await startChildServer({ ...options, wrapper: pinning.serverWrapper });
 * // ... load ...
 * pinning.restore();
 */
export function pinLoadGenerator(): CpuPinning {
  const unpinned = (why: string): CpuPinning => ({ serverWrapper: undefined, description: `not pinned (${why})`, restore() {} });
  if (process.env.BENCH_PIN === '0') return unpinned('BENCH_PIN=0');
  if (os.availableParallelism() < 2) return unpinned('one core');
  // "pid 123's current affinity list: 0,1"
  const original = taskset(['-cp', String(process.pid)])?.trim().split(': ').pop();
  if (original === undefined || taskset(['-a', '-cp', String(LOAD_CPU), String(process.pid)]) === undefined) {
    return unpinned('taskset unavailable');
  }
  return {
    serverWrapper: ['taskset', '-c', String(SERVER_CPU)],
    description: `server on cpu ${SERVER_CPU}, load generator on cpu ${LOAD_CPU}`,
    restore() {
      taskset(['-a', '-cp', original, String(process.pid)]);
    },
  };
}
