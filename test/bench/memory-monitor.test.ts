/**
 * The benchmarks report the kernel's memory-access sampling (DAMON) beside
 * their figures. Read here from a sysfs tree laid out like the kernel's, in
 * a temp folder, so the result does not depend on this machine.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryMonitor } from '../../bench/tools/memory-monitor.ts';
import { summaryMarkdown } from '../../bench/run.ts';

const roots: string[] = [];

function adminDir(kdamonds: { state: string; operations?: string; sampleUs?: number }[]): string {
  const root = mkdtempSync(path.join(tmpdir(), 'damon-'));
  roots.push(root);
  kdamonds.forEach((kdamond, i) => {
    const dir = path.join(root, 'kdamonds', String(i));
    const intervals = path.join(dir, 'contexts', '0', 'monitoring_attrs', 'intervals');
    mkdirSync(intervals, { recursive: true });
    writeFileSync(path.join(dir, 'state'), `${kdamond.state}\n`);
    if (kdamond.operations !== undefined) writeFileSync(path.join(dir, 'contexts', '0', 'operations'), `${kdamond.operations}\n`);
    if (kdamond.sampleUs !== undefined) writeFileSync(path.join(intervals, 'sample_us'), `${kdamond.sampleUs}\n`);
  });
  mkdirSync(path.join(root, 'kdamonds'), { recursive: true });
  return root;
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('memoryMonitor', () => {
  it('names a running kdamond, what it watches and how often it samples', () => {
    const dir = adminDir([{ state: 'on', operations: 'paddr', sampleUs: 500_000 }, { state: 'off', operations: 'vaddr', sampleUs: 5000 }]);

    expect(memoryMonitor(dir)).toBe('DAMON on (paddr, a sample every 500 ms)');
  });

  it('says nothing when every kdamond is off, or the kernel has no DAMON', () => {
    expect(memoryMonitor(adminDir([{ state: 'off', operations: 'paddr', sampleUs: 500_000 }]))).toBeUndefined();
    expect(memoryMonitor(adminDir([]))).toBeUndefined();
    expect(memoryMonitor(path.join(tmpdir(), 'no-such-damon-admin'))).toBeUndefined();
  });

  it('reports a running kdamond even when its intervals cannot be read', () => {
    expect(memoryMonitor(adminDir([{ state: 'on' }]))).toBe('DAMON on (unknown operations)');
  });

  it('appears in the results summary when the run saw it', () => {
    const environment = { node: 'v20', platform: 'linux', arch: 'x64', cpu: 'cpu', cores: 2, loadAverage: [1, 1, 1] };
    const run = { generatedAt: '2026-01-01T00:00:00.000Z', quick: true, durationS: 1 };

    expect(summaryMarkdown({ ...run, environment: { ...environment, memoryMonitor: 'DAMON on (paddr, a sample every 500 ms)' } }))
      .toContain('The kernel ran DAMON on (paddr, a sample every 500 ms), which holds up processes');
    expect(summaryMarkdown({ ...run, environment })).not.toContain('The kernel ran');
  });
});
