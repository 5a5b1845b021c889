/**
 * The build `npm start` runs first (src/build/bundle-service.ts). That the
 * bundle serves what the sources do is tested on the running process
 * (test/http/startup.test.ts and every test that starts a server); here:
 * where it may be written, and what it is made of.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleService } from '../../src/build/bundle-service.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const OUT = path.join(ROOT, '.tmp', 'bundle-test');

afterAll(async () => {
  await rm(OUT, { recursive: true, force: true });
});

describe('bundleService', () => {
  it('refuses a folder outside the checkout, where packages and the compiler sources cannot be found, and writes nothing', async () => {
    const outside = path.join(tmpdir(), `rules-bundle-${process.pid}`);
    await expect(bundleService(outside)).rejects.toThrow(/must be written to a folder inside/);
    expect(existsSync(outside)).toBe(false);
    await expect(bundleService(ROOT)).rejects.toThrow(/must be written to a folder inside/);
  });

  it('writes one ES module of the service with its source map, importing packages instead of copying them', async () => {
    const { entry } = await bundleService(OUT);
    expect(entry).toBe(path.join(OUT, 'server.js'));
    const code = await readFile(entry, 'utf8');
    expect(code).toMatch(/^import .* from "fastify";$/m);
    // The service's own modules are inside: the fast lane and the compiler's runtime.
    expect(code).toContain('installValidationFastLane');
    expect(code).toContain('// compiler/runtime.ts');
    expect(code).toContain('//# sourceMappingURL=server.js.map');
    const map = JSON.parse(await readFile(`${entry}.map`, 'utf8')) as { sources: string[]; sourcesContent?: unknown };
    expect(map.sources).toContain('../../src/server.ts');
    // Stack traces need positions only; the sources' text would stay in every thread's heap.
    expect(map.sourcesContent).toBeUndefined();
  });

  it('never leaves a half-written bundle to read while several builds run at once, nor partial files after', async () => {
    const { entry } = await bundleService(OUT);
    const whole = await readFile(entry, 'utf8');
    let building = true;
    const builds = Promise.all([1, 2, 3, 4].map(() => bundleService(OUT))).finally(() => (building = false));
    let reads = 0;
    while (building) {
      const text = await readFile(entry, 'utf8');
      expect(text.length).toBe(whole.length);
      expect(text.endsWith('//# sourceMappingURL=server.js.map\n')).toBe(true);
      reads++;
    }
    await builds;
    expect(reads).toBeGreaterThan(0);
    expect((await readdir(OUT)).sort()).toEqual(['management-worker.js', 'management-worker.js.map', 'server.js', 'server.js.map']);
  });

  it('writes the management threads\' entry beside the server, with the compiler and without storage', async () => {
    await bundleService(OUT);
    const worker = await readFile(path.join(OUT, 'management-worker.js'), 'utf8');
    expect(worker).toContain('// compiler/runtime.ts');
    expect(worker).toContain('// src/pool/worker-tasks.ts');
    // The main thread reads the database; a thread that could would hold connections of its own.
    expect(worker).not.toMatch(/from "(kysely|pg|@electric-sql\/pglite)"/);
  });
});
