/**
 * The order form's build: bundles page/form.ts (with the typed client) into
 * one browser module with esbuild. `buildFormPage()` answers the page's files
 * in memory, for the example's server; run directly, it writes them to
 * examples/form/dist/ for any static server:
 *
 *   node --import tsx examples/form/build.ts
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startedAsScript } from './cli.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PAGE_DIR = path.join(HERE, 'page');

/** A file of the page: its URL path, content type and bytes. */
export interface PageFile {
  contentType: string;
  body: Uint8Array;
}

/** The page's files by URL path: /, /form.js, /form.css. */
export async function buildFormPage(): Promise<Map<string, PageFile>> {
  const bundle = await build({
    entryPoints: [path.join(PAGE_DIR, 'form.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome120', 'firefox121', 'safari17'],
    minify: true,
    sourcemap: false,
    write: false,
    logLevel: 'silent',
  });
  return new Map([
    ['/', { contentType: 'text/html; charset=utf-8', body: await readFile(path.join(PAGE_DIR, 'index.html')) }],
    ['/form.css', { contentType: 'text/css; charset=utf-8', body: await readFile(path.join(PAGE_DIR, 'form.css')) }],
    ['/form.js', { contentType: 'text/javascript; charset=utf-8', body: bundle.outputFiles[0].contents }],
  ]);
}

if (startedAsScript(import.meta.url)) {
  const outDir = path.join(HERE, 'dist');
  await mkdir(outDir, { recursive: true });
  for (const [urlPath, file] of await buildFormPage()) {
    await writeFile(path.join(outDir, urlPath === '/' ? 'index.html' : urlPath.slice(1)), file.body);
  }
  console.log(`wrote ${outDir}`);
}
