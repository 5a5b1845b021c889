/**
 * The supported Node.js versions, stated the same way everywhere and
 * true: package.json's `engines` is satisfied by the oldest release it
 * admits and by every release line the README names, and so is every
 * locked package's own `engines` (so `npm ci` on them warns of nothing,
 * no EBADENGINE); the README names the lines CI runs the tests on, and
 * `.ci/run` fetches exactly those.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** npm's own range semantics (semver is what npm checks `engines` with; a dependency of the toolchain here). */
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string; major: number } | null;
};

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
const oldest = semver.minVersion(engines)!;
const readme = read('README.md');

/** "Node.js 22 (22.13 or later) or 24": the lines, and the oldest release. */
const stated = /Node\.js (\d+) \((\d+\.\d+) or later\) or (\d+)/.exec(readme);

describe('supported Node.js versions', () => {
  it('the README names the lines and the oldest release package.json admits', () => {
    expect(stated, 'README: "Node.js <major> (<major.minor> or later) or <major>"').not.toBeNull();
    expect(`${stated![2]}.0`).toBe(oldest.version);
    expect(Number(stated![1])).toBe(oldest.major);
  });

  it('every locked package supports the oldest release and each named line (no EBADENGINE on install)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };
    const releases = [oldest.version, `${stated![3]}.0.0`];
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (range === undefined) continue;
      for (const release of releases) {
        if (!semver.satisfies(release, range)) refused.push(`${path || 'the project'}@${entry.version} needs node ${range}, not ${release}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it('.ci/run runs the tests on each named line', () => {
    const fetched = [...read('.ci/run').matchAll(/\.ci\/node-bin (\d+)/g)].map((match) => match[1]);
    expect(fetched.sort()).toEqual([stated![1], stated![3]].sort());
  });
});
