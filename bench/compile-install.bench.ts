/**
 * Compile versus install (`npx tsx bench/compile-install.bench.ts`): the
 * main thread's share of making a large context's validator live.
 *
 * Live validators compile on the compile lane's threads
 * (src/pool/compile-lane.ts); the main thread only receives the build
 * (a structured clone, as piscina hands it over) and installs it: one
 * evaluation of the generated code over refs rebuilt from plain data
 * (validators/compile-validator.ts `installValidator`). Before, the main
 * thread compiled the ruleset itself, in slices of time. This prints, for
 * 5,000 copies of the loan rules (`suites/generated-ruleset.ts`, with
 * their schemas and patterns), the median of a few rounds of:
 *
 * - compile on main: `compileValidator` run at once (what the slices add up to);
 * - build on a thread: `buildValidator` (timed here on this thread: the thread's work);
 * - receive + install on main: structuredClone of the build plus `installValidator`
 *   (the clone is one task; the install runs in slices, a part a turn of the
 *   event loop: their count and the longest slice are printed too);
 *
 * and the ratio of the first to the last. `--rules=N` changes the size.
 */
import { generateRuleset } from './suites/generated-ruleset.ts';
import { buildValidator, compileValidator, installValidator, runAtOnce, type InstallFigures } from '../src/validators/compile-validator.ts';
import { median, textTable } from './tools/report-table.ts';

const ROUNDS = 5;
const count = Number(process.argv.find((a) => a.startsWith('--rules='))?.slice('--rules='.length) ?? 5000);
const rules = generateRuleset(count);
let version = 0;
const ruleset = () => ({ tenantId: 'bench', context: 'big', rulesetVersion: ++version, rules });

async function timed(work: () => unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const compileMs: number[] = [];
const buildMs: number[] = [];
const installMs: number[] = [];
const cloneMs: number[] = [];
let figures: InstallFigures | undefined;
const longestSliceMs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  compileMs.push(await timed(async () => {
    const outcome = await compileValidator(ruleset(), {}, runAtOnce);
    if (outcome.validator === undefined) throw new Error(`does not compile: ${outcome.errors[0]?.message}`);
  }));
  const live = ruleset();
  let build!: Awaited<ReturnType<typeof buildValidator>>;
  buildMs.push(await timed(async () => {
    build = await buildValidator(live, {});
  }));
  installMs.push(await timed(async () => {
    let received!: typeof build;
    cloneMs.push(await timed(() => {
      received = structuredClone(build);
    }));
    const outcome = await installValidator(live, received, (installed) => {
      figures = installed;
      longestSliceMs.push(installed.longestSliceMs);
    });
    if (outcome.validator === undefined) throw new Error('does not install');
  }));
}

const compile = median(compileMs);
const install = median(installMs);
console.log(textTable({
  header: [
    'rules', 'compile on main (ms)', 'build on a thread (ms)', 'receive + install on main (ms)', 'main-thread ratio',
    'clone (ms)', 'install slices', 'parts', 'longest slice (ms)',
  ],
  rows: [[
    String(count), compile.toFixed(0), median(buildMs).toFixed(0), install.toFixed(1), `${(compile / install).toFixed(1)}x`,
    median(cloneMs).toFixed(1), String(figures?.slices), String(figures?.parts), median(longestSliceMs).toFixed(1),
  ]],
}));
