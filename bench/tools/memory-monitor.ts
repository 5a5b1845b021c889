/**
 * Whether the kernel samples this machine's memory accesses with DAMON (a
 * `kdamond` kernel thread). On the VM these benchmarks were tuned on it
 * samples all physical memory periodically, and each sample holds up the
 * running processes briefly: the bursts line up with the slow episodes of
 * both servers under a steady load (bench/README.md, "Latency at half
 * throughput"). The benchmarks report it beside their figures; they do not
 * change it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const DAMON_ADMIN = '/sys/kernel/mm/damon/admin';

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * `DAMON on (paddr, a sample every 500 ms)` for each running kdamond, joined;
 * undefined when there is none or the kernel does not say.
 *
 * @example
 * memoryMonitor(); // 'DAMON on (paddr, a sample every 500 ms)' or undefined
 */
export function memoryMonitor(adminDir: string = DAMON_ADMIN): string | undefined {
  let kdamonds: string[];
  try {
    kdamonds = readdirSync(path.join(adminDir, 'kdamonds')).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const running = kdamonds.flatMap((kdamond) => {
    const dir = path.join(adminDir, 'kdamonds', kdamond);
    if (read(path.join(dir, 'state')) !== 'on') return [];
    const context = path.join(dir, 'contexts', '0');
    const operations = read(path.join(context, 'operations')) ?? 'unknown operations';
    const sampleUs = Number(read(path.join(context, 'monitoring_attrs', 'intervals', 'sample_us')));
    return [`DAMON on (${operations}${sampleUs > 0 ? `, a sample every ${sampleUs / 1000} ms` : ''})`];
  });
  return running.length === 0 ? undefined : running.join('; ');
}
