/**
 * The results table of bench/README.md: rendered from a run's figures,
 * written between its two markers and nowhere else, and refused with a
 * clear error when the markers are not there to say where it goes.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchResults } from '../../bench/tools/bench-results.ts';
import type { CompilerBenchResult, EngineFigure } from '../../bench/compiler.bench.ts';
import type { HttpBenchResult, PairedThroughput } from '../../bench/http/http.bench.ts';
import { RESULTS_END, RESULTS_START, replaceResults, resultsTable, writeReadmeResults } from '../../bench/tools/readme-results.ts';

const benchDir = path.resolve(import.meta.dirname, '../../bench');

const environment = { node: 'v20.99.0', platform: 'linux', arch: 'x64', cpu: 'Test CPU 9000', cores: 4, loadAverage: 0.5 };

function engine(name: string, payload: 'passing' | 'failing', meanNs: number): EngineFigure {
  return { engine: name, payload, opsPerSec: 1e9 / meanNs, meanNs, p50Ns: meanNs, p99Ns: meanNs, samples: 100, batch: 1, vsHandWritten: meanNs / 1000 };
}

const compiler: CompilerBenchResult = {
  suite: 'loan-application', ruleCount: 20, quick: false, generatedAt: '2030-01-02T03:04:05.000Z', environment,
  engines: [
    engine('hand-written', 'passing', 1000), engine('compiled', 'passing', 500), engine('peer', 'passing', 6000),
    engine('hand-written', 'failing', 1000), engine('compiled', 'failing', 800), engine('peer', 'failing', 4000),
  ],
  ratio: { passing: 0.5, failing: 0.8, rounds: 300, target: 1.5, met: true },
  compile: {
    sizes: [],
    at1000: { medianMs: 300, target: 250, met: false },
    linear: { worstGrowth: null, target: 1.25, met: null },
  },
  peers: [{ engine: 'peer', omitted: [], notes: [] }],
};

const single: PairedThroughput & { target: number; met: boolean } = {
  rounds: [], durationS: 1, connections: 10, serviceRps: 9000, bareRps: 10000, ratio: 0.9,
  serviceP99Ms: 1, bareP99Ms: 1, serviceCpuUs: 30, bareCpuUs: 25, cpuRatio: 1.2, byProcess: [], target: 0.8, met: true,
};

const http: HttpBenchResult = {
  quick: true, generatedAt: '2030-01-02T03:05:00.000Z', environment, suite: 'loan-application', ruleCount: 20, singleBodyBytes: 1000,
  single, latency: null, failing: null, batches: [], batchServerTime: null, profile: null,
};

const results: BenchResults = {
  generatedAt: '2030-01-02T03:04:05.000Z',
  quick: true,
  environment: { ...environment, loadAverage: [1, 0.5, 0.25] },
  durationS: 60,
  compiler,
  http,
  workers: { skipped: 'DATABASE_URL not set' },
};

const readme = [
  '# Benchmarks', '', 'Text before | with a pipe.', '', '## Results', '',
  RESULTS_START, 'an old table', '| a | b |', RESULTS_END, '', '## After', '', 'Text after.', '',
].join('\n');

describe('results table', () => {
  const table = resultsTable(results);

  it('names the date and the machine of the run', () => {
    expect(table).toContain('Run of 2030-01-02 03:04 UTC (`--quick`');
    expect(table).toContain('Test CPU 9000, 4 cores, Node v20.99.0');
    expect(table).toContain('suites compiler, http, workers,');
  });

  it('gives each figure its baseline, target and verdict', () => {
    const rows = table.split('\n').filter((line) => line.startsWith('| '));
    expect(rows[0]).toBe('| figure | baseline (same run) | measured | target | verdict |');
    expect(rows).toContain('| compiled validator time, passing / failing payload | hand-written validator | 0.50x / 0.80x (paired, 300 rounds) | <= 1.5x | met |');
    expect(rows).toContain('| fastest peer engine (peer) | compiled validator | 5.0x the compiled time | slower than compiled | met |');
    expect(rows).toContain('| compile 1000 rules (median) |  | 300.0 ms | < 250 ms | MISSED |');
    expect(rows).toContain('| HTTP single validation throughput | bare Fastify route, 10,000 req/s | 0.90 of it (9,000 req/s) | >= 0.8 | met |');
    expect(rows).toContain('| WORKERS=2 throughput | WORKERS=1 | skipped: DATABASE_URL not set |  |  |');
  });

  it('leaves out what the run did not measure', () => {
    expect(table).not.toContain('p99 latency');
    expect(table).not.toContain('per rule, worst growth');
    expect(table).not.toContain('heap per cached validator');
  });
});

describe('writing the table between the markers', () => {
  it('replaces what was between them and keeps every other byte', () => {
    const written = replaceResults(readme, 'NEW TABLE');
    const before = readme.slice(0, readme.indexOf(RESULTS_START) + RESULTS_START.length);
    const after = readme.slice(readme.indexOf(RESULTS_END));
    expect(written).toBe(`${before}\nNEW TABLE\n${after}`);
    expect(written).not.toContain('an old table');
  });

  it('gives the same file when written twice', () => {
    const once = replaceResults(readme, resultsTable(results));
    expect(replaceResults(once, resultsTable(results))).toBe(once);
  });

  it.each([
    ['no start marker', readme.replace(RESULTS_START, '')],
    ['no end marker', readme.replace(RESULTS_END, '')],
    ['no markers at all', '# Benchmarks\n'],
    ['the markers in the wrong order', readme.replace(RESULTS_START, 'X').replace(RESULTS_END, RESULTS_START).replace('X', RESULTS_END)],
    ['a second start marker', `${readme}${RESULTS_START}\n`],
  ])('refuses a README with %s, naming both markers', (_name, text) => {
    expect(() => replaceResults(text, 'NEW TABLE', 'bench/README.md'))
      .toThrow(`bench/README.md needs exactly one "${RESULTS_START}" and, after it, one "${RESULTS_END}"`);
  });

  it('rewrites a README file and leaves it untouched when its markers are missing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'readme-results-'));
    try {
      const file = path.join(dir, 'README.md');
      await writeFile(file, readme);
      await writeReadmeResults(file, results);
      const written = await readFile(file, 'utf8');
      expect(written).toContain('| compile 1000 rules (median) |  | 300.0 ms | < 250 ms | MISSED |');
      expect(written.startsWith(readme.slice(0, readme.indexOf(RESULTS_START)))).toBe(true);
      expect(written.endsWith(readme.slice(readme.indexOf(RESULTS_END)))).toBe(true);

      const unmarked = '# Benchmarks\n\nno table here\n';
      await writeFile(file, unmarked);
      await expect(writeReadmeResults(file, results)).rejects.toThrow(`${file} needs exactly one`);
      expect(await readFile(file, 'utf8')).toBe(unmarked);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('bench/README.md', () => {
  it('shows the table of the committed results/latest.json (after a run: npm run bench -- --readme-only)', async () => {
    const latest = JSON.parse(await readFile(path.join(benchDir, 'results', 'latest.json'), 'utf8')) as BenchResults;
    const committed = await readFile(path.join(benchDir, 'README.md'), 'utf8');
    expect(committed).toBe(replaceResults(committed, resultsTable(latest)));
  });
});
