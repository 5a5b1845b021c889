/**
 * The time profiles of `npm run bench:profile` (bench/tools/perf-profile.ts,
 * time-profile.bench.ts): perf's report read into code areas and
 * functions, and the tables built from two profiles. The last tests run
 * perf for real, on a child process that spins in a named function and on
 * the service and the bare route under load; they are skipped, saying so,
 * on a machine where perf cannot sample.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { areaOf, parsePerfReport, PERF_NODE_FLAGS, perfAvailable, profileWhile, removeJitMap } from '../../bench/tools/perf-profile.ts';
import { areaUs, differences, runTimeProfile, type ServerProfile } from '../../bench/http/time-profile.bench.ts';

// Lines as `perf report --no-children -n --sort dso,sym -g none --stdio -t '|'` printed them on the benchmark VM (1,000 samples here).
const REPORT = `# To display the perf.data header info, please use --header/--header-only options.
#
#
# Total Lost Samples: 0
#
# Samples: 1K of event 'cpu-clock'
# Event count (approx.): 200200000
#
# Overhead|Samples|Shared Object|Symbol
 11.60% | 116        |[kernel.kallsyms]  |[k] pvm_irq_enable
 4.50%  | 45         |node               |[.] v8::internal::StringTable::LookupKey<v8::internal::SeqSubStringKey<v8::internal::SeqOneByteString>, v8::internal::Isolate>(v8::internal::Isolate*, v8::internal::SeqSubStringKey<v8::internal::SeqOneByteString>*)
 1.50%  | 15         |node               |[.] v8::internal::StringTable::LookupKey<v8::internal::SeqSubStringKey<v8::internal::SeqOneByteString>, v8::internal::Isolate>(v8::internal::Isolate*, v8::internal::SeqSubStringKey<v8::internal::SeqOneByteString>*) [clone .isra.0]
 1.10%  | 11         |[JIT] tid 18305    |[.] JS:*validate :299:27
 0.80%  | 8          |[JIT] tid 18305    |[.] JS:*send2 file:///work/main/dist/server.js:8093:17
 1.00%  | 10         |libc.so.6          |[.] _int_malloc
 0.10%  | 1          |libstdc++.so.6.0.30|[.] operator new(unsigned long)
 79.40% | 794        |[JIT] tid 18305    |[.] JS:*answer file:///work/main/dist/server.js:8124:18

`;

describe('perf report', () => {
  it('sorts each sample\'s code into kernel, JIT code, the node binary, libc or other', () => {
    expect(areaOf('[kernel.kallsyms]')).toBe('kernel');
    expect(areaOf('[JIT] tid 18305')).toBe('JIT code');
    expect(areaOf('node')).toBe('node binary');
    expect(areaOf('libc.so.6')).toBe('libc');
    expect(areaOf('libstdc++.so.6.0.30')).toBe('other');
  });

  it('reads shares per function from the sample counts, adding up a C++ function\'s clones, and keeps JavaScript locations', () => {
    const entries = parsePerfReport(REPORT);
    expect(entries.map((e) => [e.area, e.symbol, e.share])).toEqual([
      ['JIT code', 'JS:*answer file:///work/main/dist/server.js:8124:18', 0.794],
      ['kernel', 'pvm_irq_enable', 0.116],
      ['node binary', 'v8::internal::StringTable::LookupKey<v8::internal::SeqSubStringKey<v8::internal::SeqOneByteString>, v8::internal::Isolate>', 0.06],
      ['JIT code', 'JS:*validate :299:27', 0.011],
      ['libc', '_int_malloc', 0.01],
      ['JIT code', 'JS:*send2 file:///work/main/dist/server.js:8093:17', 0.008],
      ['other', 'operator new', 0.001],
    ]);
    // Shares of the counted samples: they add up to the whole, whatever perf's rounding of its percentages.
    expect(entries.reduce((sum, e) => sum + e.share, 0)).toBeCloseTo(1, 12);
  });

  it('turns shares into microseconds per request and lists what grew and what shrank', () => {
    const profile = (name: string, cpuUsPerRequest: number, shares: [string, number][]): ServerProfile => ({
      name, requestsPerSec: 1e6 / cpuUsPerRequest, cpuUsPerRequest,
      entries: shares.map(([symbol, share]) => ({ area: symbol === 'pvm_irq_enable' ? 'kernel' : 'JIT code', symbol, share })),
    });
    const fast = profile('fast', 80, [['pvm_irq_enable', 0.1], ['JS:*answer', 0.05], ['JS:*gone', 0.01]]);
    const slow = profile('slow', 100, [['pvm_irq_enable', 0.12], ['JS:*answer', 0.04], ['JS:*new', 0.02]]);

    expect(areaUs(fast)).toEqual({ kernel: 8, 'JIT code': expect.closeTo(4.8, 6), 'node binary': 0, libc: 0, other: 0 });
    const rows = differences(fast, slow, 15).map((d) => [d.symbol, d.baseUs, d.otherUs]);
    expect(rows).toEqual([
      ['kernel: pvm_irq_enable', 8, 12],
      ['JIT code: JS:*new', 0, 2],
      ['JIT code: JS:*answer', 4, 4],
      ['JIT code: JS:*gone', 0.8, 0],
    ]);
    // With a short table, the biggest growth and the biggest shrink are kept.
    expect(differences(fast, slow, 1).map((d) => d.symbol)).toEqual(['kernel: pvm_irq_enable', 'JIT code: JS:*gone']);
  });
});

const canSample = await perfAvailable();

describe('perf on a real process', () => {
  it.skipIf(!canSample)('names the JavaScript function a process spends its time in (skipped where perf cannot sample)', async () => {
    const spinner = `function spinForTheProfile(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
      (function loop() { spinForTheProfile(1e6); setImmediate(loop); })();`;
    const child = spawn(process.execPath, [...PERF_NODE_FLAGS, '-e', spinner], { stdio: 'ignore' });
    try {
      // Profile once V8 has compiled the spinner to machine code (its map
      // names it): on a loaded machine that can take longer than usual, and
      // before it the samples land in the interpreter, not in the function.
      const compiled = Date.now() + 20_000;
      while (!(await readFile(`/tmp/perf-${child.pid}.map`, 'utf8').catch(() => '')).includes('spinForTheProfile') && Date.now() < compiled) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const dataFile = path.join(os.tmpdir(), `rules-perf-test-${child.pid}.data`);
      const { entries, result } = await profileWhile(child.pid!, dataFile, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return 'done';
      });
      expect(result).toBe('done');
      const spinning = entries.filter((e) => e.area === 'JIT code' && e.symbol.includes('spinForTheProfile'));
      expect(spinning.length).toBeGreaterThan(0);
      expect(spinning.reduce((sum, e) => sum + e.share, 0)).toBeGreaterThan(0.3);
      expect(existsSync(dataFile)).toBe(false);
    } finally {
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
      await removeJitMap(child.pid!);
    }
    expect(existsSync(`/tmp/perf-${child.pid}.map`)).toBe(false);
  }, 60_000);

  it.skipIf(!canSample)('profiles the real service and the bare route, each in its own code, the areas adding up to its CPU per request', async () => {
    const [service, bare] = await runTimeProfile({ processes: 1, seconds: 1, warmupS: 1 });
    expect([service.name, bare.name]).toEqual(['service #0', 'bare route']);
    const jit = (p: ServerProfile, where: RegExp): number =>
      p.entries.filter((e) => e.area === 'JIT code' && where.test(e.symbol)).reduce((sum, e) => sum + e.share, 0);
    for (const p of [service, bare]) {
      expect(p.requestsPerSec).toBeGreaterThan(0);
      const total = Object.values(areaUs(p)).reduce((sum, us) => sum + us, 0);
      expect(total / p.cpuUsPerRequest).toBeCloseTo(1, 9);
    }
    // The service runs its bundle (the fast lane answers); the bare route runs Fastify's routing, never the bundle.
    expect(jit(service, /dist\/server\.js/)).toBeGreaterThan(0.01);
    expect(jit(bare, /dist\/server\.js/)).toBe(0);
    expect(jit(bare, /node_modules\/fastify\//)).toBeGreaterThan(0.005);
  }, 120_000);
});
