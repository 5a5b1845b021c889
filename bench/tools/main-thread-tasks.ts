/**
 * The longest stretches of work on the service's main thread, from the
 * `.cpuprofile` that `node --cpu-prof` wrote: what a validation arriving
 * meanwhile waits behind. A stretch is a run of consecutive samples in
 * which the thread was not idle (one task, or several with no idle moment
 * between them); each is listed with its length and the functions that
 * took most of it, by self time and by inclusive time (the frames of the
 * service's own code and its dependencies, not Node's internals).
 *
 * `node --import tsx bench/tools/main-thread-tasks.ts PROFILE [--min-ms=5] [--top=20] [--phase=FROM-TO]`
 *
 * `--phase` keeps the stretches that began between two instants of the
 * system's monotonic clock in microseconds (process.hrtime, the clock V8's
 * profiler stamps its samples with): `npm run bench:isolation -- --cpu-prof`
 * prints each phase's.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One stretch of work: when it started (monotonic clock, µs), how long, and what took it. */
export interface MainThreadTask {
  startUs: number;
  durationMs: number;
  /** Functions by time spent in them alone (top frame), longest first. */
  self: { fn: string; ms: number }[];
  /** Functions by time spent in them and what they called, longest first; Node's internals left out. */
  inclusive: { fn: string; ms: number }[];
}

const name = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url === '' ? '' : path.basename(url.replace(/^file:\/\//, ''));
  return `${functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${lineNumber + 1}`}`;
};

const top = (times: Map<string, number>, count: number): { fn: string; ms: number }[] =>
  [...times].sort((a, b) => b[1] - a[1]).slice(0, count).map(([fn, us]) => ({ fn, ms: us / 1000 }));

/**
 * The stretches of at least `minMs`, longest first.
 *
 * @example
 * const tasks = mainThreadTasks(JSON.parse(await readFile(file, 'utf8')), 5);
 */
export function mainThreadTasks(profile: CpuProfile, minMs: number, frames = 6): MainThreadTask[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const idle = (id: number): boolean => byId.get(id)?.callFrame.functionName === '(idle)';
  const tasks: MainThreadTask[] = [];
  let at = 0;
  let current: { startUs: number; us: number; self: Map<string, number>; inclusive: Map<string, number> } | undefined;
  const close = (): void => {
    if (current !== undefined && current.us >= minMs * 1000) {
      const { startUs, us, self, inclusive } = current;
      tasks.push({ startUs: profile.startTime + startUs, durationMs: us / 1000, self: top(self, frames), inclusive: top(inclusive, frames) });
    }
    current = undefined;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    // A sample's delta is the time since the one before: it belongs to the sample it leads to.
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    const id = profile.samples[i];
    if (idle(id)) {
      close();
      continue;
    }
    current ??= { startUs: at - delta, us: 0, self: new Map(), inclusive: new Map() };
    current.us += delta;
    const leaf = byId.get(id)!;
    current.self.set(name(leaf), (current.self.get(name(leaf)) ?? 0) + delta);
    const seen = new Set<string>();
    for (let node: ProfileNode | undefined = leaf; node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
      const { url } = node.callFrame;
      if (url === '' || url.startsWith('node:')) continue;
      const key = name(node);
      if (seen.has(key)) continue;
      seen.add(key);
      current.inclusive.set(key, (current.inclusive.get(key) ?? 0) + delta);
    }
  }
  close();
  return tasks.sort((a, b) => b.durationMs - a.durationMs);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  const [file] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const option = (flag: string, fallback: number): number => {
    const arg = process.argv.find((a) => a.startsWith(`--${flag}=`));
    return arg === undefined ? fallback : Number(arg.slice(flag.length + 3));
  };
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const phase = process.argv.find((a) => a.startsWith('--phase='))?.slice('--phase='.length).split('-').map(Number) ?? [0, Infinity];
  const tasks = mainThreadTasks(profile, option('min-ms', 5)).filter((task) => task.startUs >= phase[0] && task.startUs <= phase[1]);
  const total = tasks.reduce((sum, task) => sum + task.durationMs, 0);
  console.log(`${tasks.length} stretches of ${option('min-ms', 5)} ms or more on the main thread of ${path.basename(file)}, ${total.toFixed(0)} ms in all`);
  for (const task of tasks.slice(0, option('top', 20))) {
    console.log(`\n${task.durationMs.toFixed(1)} ms at ${((task.startUs - profile.startTime) / 1e6).toFixed(2)} s`);
    console.log(`  self:      ${task.self.map((f) => `${f.fn} ${f.ms.toFixed(1)}`).join(' | ')}`);
    console.log(`  inclusive: ${task.inclusive.map((f) => `${f.fn} ${f.ms.toFixed(1)}`).join(' | ')}`);
  }
}
