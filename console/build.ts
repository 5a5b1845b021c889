/**
 * The console's build: `console/src/` (Preact and CodeMirror, bundled by
 * esbuild) to static files the service serves at /console
 * (src/console/console-routes.ts).
 *
 * The output folder (`dist/console/` by default) holds `index.html`, never
 * cached by browsers, and `assets/`, whose file names carry a hash of
 * their content, so they can be cached for ever: a new build makes new
 * names, and the new `index.html` points at them. Each asset also has a
 * `.gz` twin that the service sends to browsers that accept gzip.
 * `build.json` records a hash of the build's inputs, so the test suite
 * rebuilds only when the sources changed (`buildConsoleIfStale`).
 *
 * Run by `npm run build` (beside the service's bundle) and by the test
 * suite's global setup.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** The checkout this file belongs to. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The console's sources. */
export const CONSOLE_SOURCE_DIR = path.join(ROOT, 'console', 'src');

/** Where `npm run build` writes the console, and where the service looks for it unless CONSOLE_DIR says otherwise. */
export const DEFAULT_CONSOLE_OUT_DIR = path.join(ROOT, 'dist', 'console');

/** How long the assets of an earlier build are kept after a new one. */
const STALE_ASSET_MS = 60 * 60 * 1000;

/** The record of a build, `build.json` in the output folder. */
export interface ConsoleBuild {
  /** Hash of the sources, this file and the lock file the build was made from. */
  inputs: string;
  /** The entry files under `assets/`, as `index.html` names them. */
  script: string;
  style: string;
  /** Bytes of each asset, and gzipped. */
  sizes: Record<string, { bytes: number; gzip: number }>;
  buildMs: number;
}

/**
 * The service's files the console bundles: the rule language's records
 * (completion, hover and highlighting come from them) and the one module
 * they import. The build fails when the bundle takes anything else from
 * outside console/src and node_modules, so the hash below always covers it.
 */
export const SHARED_SOURCES: readonly string[] = [
  'compiler/language/functions.ts', 'compiler/language/methods.ts', 'compiler/language/types.ts', 'compiler/analysis/value-types.ts',
];

/** Every file whose change makes a new console: the sources, the shared sources, this script, the locked package versions. */
async function inputFiles(): Promise<string[]> {
  const entries = await readdir(CONSOLE_SOURCE_DIR, { recursive: true, withFileTypes: true });
  const sources = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  const shared = SHARED_SOURCES.map((file) => path.join(ROOT, file));
  return [...sources.sort(), ...shared, fileURLToPath(import.meta.url), path.join(ROOT, 'package-lock.json')];
}

async function inputsHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await inputFiles()) {
    hash.update(path.relative(ROOT, file)).update('\0').update(await readFile(file)).update('\0');
  }
  return hash.digest('hex');
}

/** The page: no inline script or style, so the content security policy needs neither. */
function indexHtml(script: string, style: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Rules console</title>',
    // An empty icon, so that browsers do not ask for /favicon.ico (a 404 in every page's log); the policy allows data: images.
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="/console/assets/${style}">`,
    `<script type="module" src="/console/assets/${script}"></script>`,
    '</head>',
    '<body>',
    '<div id="app"></div>',
    '<noscript>The rules console needs JavaScript.</noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Writes beside the target and renames over it: a server reading the folder never sees half a file. */
async function writeAtomically(file: string, contents: Uint8Array | string): Promise<void> {
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  await writeFile(partial, contents);
  await rename(partial, file);
}

/**
 * Builds the console into `outDir` (default `dist/console/`).
 *
 * @example
 * const { script, sizes } = await buildConsole();
 */
export async function buildConsole(outDir: string = DEFAULT_CONSOLE_OUT_DIR): Promise<ConsoleBuild> {
  const started = performance.now();
  const inputs = await inputsHash();
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { console: path.join(CONSOLE_SOURCE_DIR, 'main.tsx') },
    outdir: path.join(outDir, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome120', 'firefox121', 'safari17'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: process.env.CONSOLE_DEBUG === undefined,
    legalComments: 'none',
    tsconfig: path.join(CONSOLE_SOURCE_DIR, 'tsconfig.json'),
    logLevel: 'silent',
    write: false,
    metafile: true,
  });
  const outside = Object.keys(result.metafile.inputs)
    .filter((input) => !input.startsWith('console/src/') && !input.includes('node_modules/') && !SHARED_SOURCES.includes(input));
  // A file the hash does not cover would leave a stale console in place after it changed.
  if (outside.length > 0) throw new Error(`the console bundles files that SHARED_SOURCES does not list: ${outside.join(', ')}`);
  const assetsDir = path.join(outDir, 'assets');
  await mkdir(assetsDir, { recursive: true });
  const sizes: ConsoleBuild['sizes'] = {};
  let script = '';
  let style = '';
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    const gzip = gzipSync(file.contents, { level: 9 });
    // The .gz first: a server that finds the file finds its twin.
    await writeAtomically(`${file.path}.gz`, gzip);
    await writeAtomically(file.path, file.contents);
    sizes[name] = { bytes: file.contents.byteLength, gzip: gzip.byteLength };
    if (name.endsWith('.js')) script = name;
    if (name.endsWith('.css')) style = name;
  }
  if (script === '' || style === '') throw new Error('the console build made no script or no style sheet');
  await writeAtomically(path.join(outDir, 'index.html'), indexHtml(script, style));
  // Assets of earlier builds go once they are an hour old: a page loaded before this build (a test running
  // beside it, a browser tab) may still ask for them meanwhile.
  const current = new Set(Object.keys(sizes).flatMap((name) => [name, `${name}.gz`]));
  const before = Date.now() - STALE_ASSET_MS;
  for (const name of await readdir(assetsDir)) {
    const file = path.join(assetsDir, name);
    if (!current.has(name) && (await stat(file)).mtimeMs < before) await rm(file, { force: true });
  }
  const record: ConsoleBuild = { inputs, script, style, sizes, buildMs: performance.now() - started };
  await writeAtomically(path.join(outDir, 'build.json'), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/** The record of the build in `outDir`, or undefined when there is none. */
export async function readConsoleBuild(outDir: string = DEFAULT_CONSOLE_OUT_DIR): Promise<ConsoleBuild | undefined> {
  try {
    return JSON.parse(await readFile(path.join(outDir, 'build.json'), 'utf8')) as ConsoleBuild;
  } catch {
    return undefined;
  }
}

/**
 * Builds the console unless `outDir` already holds a build of the current
 * sources. Answers whether it built.
 *
 * @example
 * await buildConsoleIfStale(); // in the test suite's global setup
 */
export async function buildConsoleIfStale(outDir: string = DEFAULT_CONSOLE_OUT_DIR): Promise<boolean> {
  const existing = await readConsoleBuild(outDir);
  if (existing !== undefined && existing.inputs === await inputsHash()) return false;
  await buildConsole(outDir);
  return true;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { script, style, sizes, buildMs } = await buildConsole();
    const gzip = Object.values(sizes).reduce((sum, size) => sum + size.gzip, 0);
    console.log(`built console (${script}, ${style}; ${Math.round(gzip / 1024)} KiB gzipped) in ${Math.round(buildMs)} ms`);
  } catch (error) {
    console.error(`console build failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
