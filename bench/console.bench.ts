/**
 * `npm run bench:console`: what the console costs a browser. Builds it
 * (console/build.ts) and prints the size of its script and style sheet,
 * raw and gzipped (what the service sends); then starts the real service
 * on the embedded database and opens /console in headless Chromium
 * (test/support/browser.ts), each time in a new browser context:
 *
 * - `first load`: nothing cached, navigation start to the console's
 *   `console:interactive` mark (the first page rendered and answering);
 * - `cached load`: the same with the assets in the browser's cache, as on
 *   a second visit;
 * - `rule editor`: from a click on a rule's link to its code editors on
 *   screen (the rule read and the editor built).
 *
 * Medians of `--rounds=N` (default 7). Figures go to stdout only.
 */
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildConsole, DEFAULT_CONSOLE_OUT_DIR } from '../console/build.ts';
import { startTestApp } from '../test/support/app.ts';
import { launchBrowser, signIn } from '../test/support/browser.ts';

/** The goal for the gzipped script and style sheet together. */
const GZIP_GOAL_BYTES = 400 * 1024;

const roundsArgument = process.argv.find((argument) => argument.startsWith('--rounds='));
const rounds = roundsArgument === undefined ? 7 : Math.max(1, Number(roundsArgument.slice('--rounds='.length)));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

const build = await buildConsole();
let gzipTotal = 0;
console.log('console bundle');
for (const name of [build.script, build.style]) {
  const contents = readFileSync(path.join(DEFAULT_CONSOLE_OUT_DIR, 'assets', name));
  const gzip = gzipSync(contents, { level: 9 }).byteLength;
  gzipTotal += gzip;
  console.log(`  ${name.padEnd(28)} ${kib(contents.byteLength).padStart(11)} raw  ${kib(gzip).padStart(10)} gzipped`);
}
console.log(`  total gzipped ${kib(gzipTotal)}: goal under ${kib(GZIP_GOAL_BYTES)}, ${gzipTotal < GZIP_GOAL_BYTES ? 'met' : 'MISSED'}`);

const app = await startTestApp();
const browser = await launchBrowser();
try {
  const rule = await app.request('POST', '/api/v1/rules', {
    body: { context: 'orders', code: 'TOTAL_MAX', name: 'Order total limit', fieldPath: 'total', expression: '$value <= 10000', when: 'exists(total)' },
  });
  if (rule.status !== 201) throw new Error(`could not create the rule: ${rule.status} ${rule.text}`);

  const firstLoad: number[] = [];
  const cachedLoad: number[] = [];
  const editor: number[] = [];
  const interactiveAt = "performance.getEntriesByName('console:interactive')[0]?.startTime ?? -1";
  for (let round = 0; round < rounds; round++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/console`);
    await page.waitForFunction(`${interactiveAt} >= 0`);
    firstLoad.push(await page.evaluate<number>(interactiveAt));
    await page.reload();
    await page.waitForFunction(`${interactiveAt} >= 0`);
    cachedLoad.push(await page.evaluate<number>(interactiveAt));

    await signIn(page, app.tenantId, app.adminKey);
    await page.getByRole('link', { name: 'orders', exact: true }).click();
    const link = page.getByRole('link', { name: 'TOTAL_MAX' });
    await link.waitFor();
    const started = performance.now();
    await link.click();
    await page.getByRole('textbox', { name: 'expression', exact: true }).waitFor();
    editor.push(performance.now() - started);
    await context.close();
  }
  console.log(`time to interactive in headless Chromium, median of ${rounds}`);
  console.log(`  first load   ${median(firstLoad).toFixed(0).padStart(5)} ms`);
  console.log(`  cached load  ${median(cachedLoad).toFixed(0).padStart(5)} ms`);
  console.log(`  rule editor  ${median(editor).toFixed(0).padStart(5)} ms`);
} finally {
  await browser.close();
  await app.close();
}
