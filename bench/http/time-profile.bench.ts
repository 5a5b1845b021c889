/**
 * Where each server's time goes under load (`npm run bench:profile`): the
 * bare route and N service processes (default 2), each profiled with perf
 * (perf-profile.ts) through one closed-loop load of the single validation,
 * pinned as in http.bench.ts. Prints microseconds per request by code area
 * (kernel, JIT code, node binary, libc) for every server, then the
 * functions that differ most between the first service process and the
 * bare route, and between the slowest and the fastest service process.
 *
 * A diagnostic, not a target: the figures are one load each on a noisy
 * machine. It exists because the service's processes settle at different
 * paces (bench/README.md, "One process is one draw") and V8's own profiler
 * evens them out; comparing the fast and slow processes' profiles is how
 * to find out why. Needs perf (Debian package `linux-perf`).
 *
 * Options: `--processes=N`, `--seconds=S` (each load, default 6),
 * `--top=K` (rows of each difference table, default 15), `--failing`
 * (the failing payload instead of the passing one).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';
import { loanApplicationSuite as suite } from '../suites/loan-application.ts';
import type { ChildServer } from '../tools/child-server.ts';
import { SINGLE_PATH, singleBody, startHttpPair } from './http.bench.ts';
import { runLoad } from '../tools/load.ts';
import { type CodeArea, PERF_NODE_FLAGS, perfAvailable, profileWhile, type ProfileEntry, removeJitMap } from '../tools/perf-profile.ts';
import { fixed, int, textTable } from '../tools/report-table.ts';

const AREAS: CodeArea[] = ['kernel', 'node binary', 'JIT code', 'libc', 'other'];

export interface TimeProfileOptions {
  processes?: number;
  /** Each profiled load (default 6). */
  seconds?: number;
  /** Each server's warm-up load before any profile (default 4). */
  warmupS?: number;
  payload?: 'passing' | 'failing';
}

/** One server's profiled load. */
export interface ServerProfile {
  name: string;
  requestsPerSec: number;
  /** CPU time of all the process's threads per request, from /proc. */
  cpuUsPerRequest: number;
  entries: ProfileEntry[];
}

/** Microseconds per request spent in each symbol (`area` + symbol as key). */
function usBySymbol(profile: ServerProfile): Map<string, number> {
  const us = new Map<string, number>();
  for (const e of profile.entries) us.set(`${e.area}: ${e.symbol}`, e.share * profile.cpuUsPerRequest);
  return us;
}

/**
 * The `top` symbols whose time per request grew most from `base` to
 * `other`, and the `top` that shrank most.
 */
export function differences(base: ServerProfile, other: ServerProfile, top: number): { symbol: string; baseUs: number; otherUs: number }[] {
  const a = usBySymbol(base);
  const b = usBySymbol(other);
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((symbol) => ({ symbol, baseUs: a.get(symbol) ?? 0, otherUs: b.get(symbol) ?? 0 }));
  rows.sort((x, y) => (y.otherUs - y.baseUs) - (x.otherUs - x.baseUs));
  return rows.length <= 2 * top ? rows : [...rows.slice(0, top), ...rows.slice(-top)];
}

/** Microseconds per request in each code area. */
export function areaUs(profile: ServerProfile): Record<CodeArea, number> {
  const us = Object.fromEntries(AREAS.map((a) => [a, 0])) as Record<CodeArea, number>;
  for (const e of profile.entries) us[e.area] += e.share * profile.cpuUsPerRequest;
  return us;
}

/**
 * Profiles the bare route and the service processes (started, published
 * and pinned by http.bench.ts's startHttpPair).
 *
 * @example
 * const profiles = await runTimeProfile({ processes: 3 });
 */
export async function runTimeProfile(options: TimeProfileOptions = {}): Promise<ServerProfile[]> {
  const processes = options.processes ?? 2;
  if (!(Number.isInteger(processes) && processes >= 1)) throw new Error(`--processes must be a whole number of at least 1, not ${processes}`);
  const seconds = options.seconds ?? 6;
  const body = singleBody(options.payload);
  const pair = await startHttpPair({ serviceProcesses: processes, nodeFlags: PERF_NODE_FLAGS, bareNodeFlags: PERF_NODE_FLAGS });
  const servers: { name: string; server: ChildServer; headers: Record<string, string> }[] = [
    ...pair.services.map((s, i) => ({ name: `service #${i}`, server: s, headers: s.headers })),
    // The bare route ignores the key.
    { name: 'bare route', server: pair.bare, headers: pair.service.headers },
  ];
  try {
    const load = (s: (typeof servers)[number], durationS: number) =>
      runLoad({ url: s.server.baseUrl + SINGLE_PATH, headers: s.headers, body, connections: 10, durationS });
    for (const s of servers) await load(s, options.warmupS ?? 4);
    const profiles: ServerProfile[] = [];
    for (const s of servers) {
      const cpuBefore = s.server.cpuTimeMs();
      const dataFile = path.join(os.tmpdir(), `rules-bench-perf-${s.server.pid}.data`);
      const { entries, result } = await profileWhile(s.server.pid, dataFile, () => load(s, seconds));
      const cpuUsPerRequest = ((s.server.cpuTimeMs() - cpuBefore) * 1000) / result.requests;
      profiles.push({ name: s.name, requestsPerSec: result.requestsPerSec, cpuUsPerRequest, entries });
    }
    return profiles;
  } finally {
    await pair.stop();
    await Promise.all(servers.map((s) => removeJitMap(s.server.pid)));
  }
}

function printProfiles(profiles: ServerProfile[], top: number, payload: string): void {
  console.log(`\nTime per single validation by code area (perf, cpu-clock): ${suite.name}, ${payload} payload, pinned, one closed-loop load each\n`);
  const areas = profiles.map(areaUs);
  console.log(textTable({
    header: ['us per request', ...profiles.map((p) => p.name)],
    rows: [
      ['req/s', ...profiles.map((p) => int(p.requestsPerSec))],
      ['CPU (all threads)', ...profiles.map((p) => fixed(p.cpuUsPerRequest, 1))],
      ...AREAS.map((area) => [`  ${area}`, ...areas.map((a) => fixed(a[area], 1))]),
    ],
  }));
  const bare = profiles[profiles.length - 1];
  const services = profiles.slice(0, -1);
  const table = (title: string, base: ServerProfile, other: ServerProfile): void => {
    console.log(`\n${title}\n`);
    console.log(textTable({
      header: ['function', `${base.name} us`, `${other.name} us`, 'difference'],
      rows: differences(base, other, top).map((d) => [d.symbol.slice(0, 110), fixed(d.baseUs, 2), fixed(d.otherUs, 2), fixed(d.otherUs - d.baseUs, 2)]),
    }));
  };
  if (services.length > 0) table(`Where ${services[0].name} spends more (and less) than the bare route, per request`, bare, services[0]);
  if (services.length > 1) {
    const byPace = [...services].sort((a, b) => b.requestsPerSec - a.requestsPerSec);
    table('Where the slowest service process spends more (and less) than the fastest, per request', byPace[0], byPace[byPace.length - 1]);
  }
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  if (!(await perfAvailable())) {
    console.error('bench:profile needs perf with cpu-clock sampling (apt-get install linux-perf; perf_event_paranoid <= 2 or root)');
    process.exit(1);
  }
  const option = (name: string): number | undefined => {
    const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
    return arg === undefined ? undefined : Number(arg.slice(name.length + 3));
  };
  const top = option('top') ?? 15;
  const payload = process.argv.includes('--failing') ? 'failing' : 'passing';
  printProfiles(await runTimeProfile({ processes: option('processes'), seconds: option('seconds'), payload }), top, payload);
}
