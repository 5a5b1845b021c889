/**
 * Cores of their own for the server under test and the load generator.
 *
 * On a small machine the load generator (autocannon, in the benchmark's
 * own process) and the server share the cores with everything else, and
 * the scheduler moves them around: the same server's ratio to the bare
 * route moved widely between runs minutes apart. Pinned, the server (all
 * its threads) to one core and the load generator to another, the rounds
 * of a run agree closely. The service and the bare route are pinned alike,
 * so the ratio stays like for like.
 *
 * Pinning is for throughput. A pinned server's garbage collector and
 * compiler threads share its one core, which no deployment does, so
 * latency is measured unpinned (`unpin`, then `pin` again).
 *
 * Uses `taskset` (util-linux); without it, with one core, or with
 * BENCH_PIN=0, nothing is pinned and the results say so.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

const SERVER_CPU = '1';
const LOAD_CPU = '0';

export interface CpuPinning {
  /** Shown with the results. */
  readonly description: string;
  /** Servers (every thread) to their core, this process (the load generator) to its own. */
  pin(serverPids: readonly number[]): void;
  /** Everyone back on every core this process had at the start. */
  unpin(serverPids: readonly number[]): void;
}

function taskset(args: string[]): string | undefined {
  const result = spawnSync('taskset', args, { encoding: 'utf8' });
  return result.status === 0 ? result.stdout : undefined;
}

function setAffinity(cpus: string, pids: readonly number[]): void {
  for (const pid of pids) {
    if (taskset(['-a', '-cp', cpus, String(pid)]) === undefined) throw new Error(`taskset could not pin process ${pid} to cpus ${cpus}`);
  }
}

/**
 * The cpus of an affinity list as taskset prints it (`0,1`, `0-3,8-11`).
 *
 * @example
 * cpusOf('0-2,8'); // Set { 0, 1, 2, 8 }
 */
export function cpusOf(list: string): Set<number> {
  const cpus = new Set<number>();
  for (const part of list.split(',')) {
    const [from, to = from] = part.trim().split('-').map(Number);
    for (let cpu = from; cpu <= to; cpu++) cpus.add(cpu);
  }
  return cpus;
}

/**
 * How this machine pins: by taskset, or not at all.
 *
 * @example
 * const pinning = cpuPinning();
 * pinning.pin([server.pid]);   // throughput rounds
 * pinning.unpin([server.pid]); // latency, or when done
 */
export function cpuPinning(): CpuPinning {
  const unpinned = (why: string): CpuPinning => ({ description: `not pinned (${why})`, pin() {}, unpin() {} });
  if (process.env.BENCH_PIN === '0') return unpinned('BENCH_PIN=0');
  if (os.cpus().length < 2) return unpinned('one core');
  // "pid 123's current affinity list: 0,1"
  const original = taskset(['-cp', String(process.pid)])?.trim().split(': ').pop();
  if (original === undefined) return unpinned('taskset unavailable');
  const allowed = cpusOf(original);
  if (!allowed.has(Number(LOAD_CPU)) || !allowed.has(Number(SERVER_CPU))) return unpinned(`cpus ${LOAD_CPU} and ${SERVER_CPU} not both allowed (${original})`);
  return {
    description: `throughput with the server on cpu ${SERVER_CPU} and the load generator on cpu ${LOAD_CPU}; latency unpinned`,
    pin(serverPids) {
      setAffinity(SERVER_CPU, serverPids);
      setAffinity(LOAD_CPU, [process.pid]);
    },
    unpin(serverPids) {
      setAffinity(original, [...serverPids, process.pid]);
    },
  };
}
