/**
 * The throughput rounds of bench/http/http.bench.ts rotate over the
 * service processes and report each one's medians beside the overall
 * figure (bench/README.md, "One process is one draw"). Two bare routes
 * stand in for two service processes here (they answer any key), so the
 * machinery runs in seconds; no figure is asserted, only where the rounds
 * went and how they were summed up. Every process is measured, so every
 * process's answers are checked before any load.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../bench/tools/child-server.ts';
import { checkAnswers, pairedThroughput, singleBody, SINGLE_PATH, startHttpPair, type HttpPair } from '../../bench/http/http.bench.ts';
import { median } from '../../bench/tools/report-table.ts';
import type { ServiceProcess } from '../../bench/tools/service-process.ts';

const bareEntry = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/tools/bare-server.ts');

function asService(server: ChildServer, key: string): ServiceProcess {
  return {
    name: server.name, pid: server.pid, baseUrl: server.baseUrl,
    childProcessCount: () => server.childProcessCount(), cpuTimeMs: () => server.cpuTimeMs(), stop: (grace) => server.stop(grace),
    tenantId: 'bench', adminKey: key, validatorKey: key,
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-tenant-id': 'bench' },
  };
}

describe('paired throughput over several service processes', () => {
  it('gives round r to process r mod n and reports each process\'s medians of its own rounds', async () => {
    const servers = await Promise.all(['first', 'second', 'bare'].map((name) => startChildServer({ name, entry: bareEntry, env: {} })));
    const [first, second, bare] = servers;
    const services = [asService(first, 'key-0'), asService(second, 'key-1')];
    const pair: HttpPair = {
      service: services[0], services, bare, pinning: 'not pinned (test)', pin() {}, unpin() {}, stop: async () => {},
    };
    try {
      const result = await pairedThroughput(pair, SINGLE_PATH, singleBody(), { rounds: 4, durationS: 0.5, connections: 2, warmupS: 0.2 });

      expect(result.rounds.map((r) => r.serviceProcess)).toEqual([0, 1, 0, 1]);
      for (const round of result.rounds) {
        expect(round.serviceRps).toBeGreaterThan(0);
        expect(round.ratio).toBeCloseTo(round.serviceRps / round.bareRps, 10);
      }
      expect(result.ratio).toBe(median(result.rounds.map((r) => r.ratio)));
      expect(result.byProcess.map((p) => [p.process, p.rounds])).toEqual([[0, 2], [1, 2]]);
      for (const p of result.byProcess) {
        const own = result.rounds.filter((r) => r.serviceProcess === p.process);
        expect(p.ratio).toBe(median(own.map((r) => r.ratio)));
        expect(p.serviceRps).toBe(median(own.map((r) => r.serviceRps)));
      }

      // Fewer rounds than processes: the process without a round is left out, not reported as NaN.
      const short = await pairedThroughput(pair, SINGLE_PATH, singleBody(), { rounds: 1, durationS: 0.3, connections: 2, warmupS: 0 });
      expect(short.byProcess.map((p) => p.process)).toEqual([0]);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  }, 60_000);

  it('checks every process\'s answers before any load, not only the first one\'s', async () => {
    // A real service first, then a bare route posing as a second process: its fixed
    // passing answer to the failing payload is a wrong answer the check must name.
    const pair = await startHttpPair();
    const impostor = await startChildServer({ name: 'impostor', entry: bareEntry, env: {} });
    try {
      await checkAnswers(pair, { batch: false, transaction: false });
      const withImpostor: HttpPair = { ...pair, services: [pair.service, asService(impostor, 'key-1')] };
      await expect(checkAnswers(withImpostor, { batch: false, transaction: false }))
        .rejects.toThrow('the failing single validation (service process #1) wrongly');
    } finally {
      await Promise.all([pair.stop(), impostor.stop()]);
    }
  }, 120_000);
});
