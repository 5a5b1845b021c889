/**
 * The service as one JavaScript file: `src/server.ts` and everything it
 * imports from `src/`, `compiler/` and `migrations/`, bundled by esbuild;
 * packages stay imports of `node_modules`. `npm start` runs the bundle.
 * Beside it, `management-worker.js`: the entry of the management threads
 * (src/pool/), bundled the same way.
 *
 * Why a bundle and not `node --import tsx src/server.ts`: the same code ran
 * 2-14 % (median 9 %) more single validations per second from the bundle,
 * in five paired runs on the same machine (bench/README.md, "From a
 * bundle"). Why is not settled; it is not tsx's loader.
 *
 * The bundle must be written inside the checkout: packages resolve from the
 * checkout's `node_modules`, and standalone modules are bundled from the
 * compiler's sources, which compiler/source-files.ts finds by walking up.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The checkout this file belongs to. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `npm run build` writes the bundle, and `npm start` runs it from. */
export const DEFAULT_OUT_DIR = path.join(ROOT, 'dist');

/** The file `bundleService` writes in `outDir` and node runs. */
export function bundleEntry(outDir: string = DEFAULT_OUT_DIR): string {
  return path.join(outDir, 'server.js');
}

/** Node's flags for running the bundle: stack traces name the TypeScript sources, as under tsx. */
export const BUNDLE_NODE_FLAGS: readonly string[] = ['--enable-source-maps'];

export interface BundledService {
  /** The file to run: `node --enable-source-maps <entry>`. */
  entry: string;
  /** Wall-clock build time in milliseconds. */
  buildMs: number;
}

/**
 * Bundles the service into `outDir` (default `dist/`): `server.js`,
 * `management-worker.js` and their source maps.
 *
 * @example
 * const { entry } = await bundleService();
 * spawn(process.execPath, [...BUNDLE_NODE_FLAGS, entry]);
 */
export async function bundleService(outDir: string = DEFAULT_OUT_DIR): Promise<BundledService> {
  const started = performance.now();
  const inside = path.relative(ROOT, path.resolve(outDir));
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) {
    throw new Error(`the bundle must be written to a folder inside ${ROOT} (packages and the compiler's sources are found from there), not ${outDir}`);
  }
  const result = await build({
    absWorkingDir: ROOT,
    // The management threads' entry is a file of its own: a worker thread starts from a file
    // (src/pool/management-pool.ts finds it beside server.js).
    entryPoints: { server: path.join(ROOT, 'src', 'server.ts'), 'management-worker': path.join(ROOT, 'src', 'pool', 'management-worker.ts') },
    outdir: outDir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    // Positions and names only: Node keeps a loaded map's JSON for as long
    // as the process runs (and parses it when a stack trace is printed), so
    // the sources' text (1.6 of server.js.map's 2.2 MB) would be heap on
    // every thread for nothing a stack trace shows.
    sourcesContent: false,
    // No `__name(fn, "name")` around every function and class (tsx adds
    // them): nothing reads those names, and they may be part of what the
    // bundle gains over tsx (bench/README.md, "From a bundle").
    keepNames: false,
    logLevel: 'silent',
    write: false,
  });
  // Each file is written beside its place and renamed over it: instances
  // started together from one checkout (several `npm start`, or the tests)
  // build at the same moment, and none may load a file half written by
  // another. The map goes first, so a new bundle never meets an old map.
  await mkdir(outDir, { recursive: true });
  const isMap = (file: { path: string }): boolean => file.path.endsWith('.map');
  for (const file of [...result.outputFiles.filter(isMap), ...result.outputFiles.filter((file) => !isMap(file))]) {
    const partial = `${file.path}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, file.contents);
    await rename(partial, file.path);
  }
  return { entry: bundleEntry(outDir), buildMs: performance.now() - started };
}
