/**
 * Where the service's time goes under load: the `.cpuprofile` files that
 * `node --cpu-prof` wrote, reduced to the functions with the most self
 * time (samples whose top frame is that function), as a share of the
 * samples in which the process was not idle.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileTop {
  file: string;
  top: { fn: string; where: string; selfPct: number }[];
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function where(url: string, line: number): string {
  if (url === '') return '';
  let file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) file = file.slice(modules + 'node_modules/'.length);
  else if (file.startsWith(root)) file = path.relative(root, file);
  return `${file}:${line + 1}`;
}

/**
 * Summarises every profile in `dir` written after `since` (epoch ms).
 *
 * @example
 * const [{ top }] = await summarizeProfiles('/tmp/rules-bench-profiles', start, 10);
 */
export async function summarizeProfiles(dir: string, since: number, count: number): Promise<ProfileTop[]> {
  let files: string[];
  try {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main
    // thread; the others are loader workers (tsx's module hooks, where a
    // server runs under tsx) that do nothing under load.
    files = (await readdir(dir)).filter((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  } catch {
    return [];
  }
  const summaries: ProfileTop[] = [];
  for (const name of files.sort()) {
    const file = path.join(dir, name);
    if ((await stat(file)).mtimeMs < since) continue;
    const profile = JSON.parse(await readFile(file, 'utf8')) as { nodes: ProfileNode[] };
    const self = new Map<string, { fn: string; where: string; hits: number }>();
    let busy = 0;
    for (const node of profile.nodes) {
      const hits = node.hitCount ?? 0;
      const { functionName, url, lineNumber } = node.callFrame;
      if (hits === 0 || functionName === '(idle)') continue;
      busy += hits;
      const key = `${functionName}|${url}|${lineNumber}`;
      const entry = self.get(key) ?? { fn: functionName || '(anonymous)', where: where(url, lineNumber), hits: 0 };
      entry.hits += hits;
      self.set(key, entry);
    }
    const top = [...self.values()].sort((a, b) => b.hits - a.hits).slice(0, count)
      .map((e) => ({ fn: e.fn, where: e.where, selfPct: (100 * e.hits) / busy }));
    summaries.push({ file, top });
  }
  return summaries;
}
