/**
 * Pattern matchers benchmark (`npm run bench:regex`).
 *
 * The e-mail-like pattern `^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+[.][A-Za-z]{2,}$`
 * is not proven linear for V8's backtracking engine, so the service runs it
 * on the DFA of compiler/regex/build-dfa.ts (re2js before). This times, on
 * the same valid and invalid e-mail-like strings:
 * - `dfa`: the service's matcher (`compilePattern(..).matcher`);
 * - `native`: `new RegExp(pattern)` without flags, the baseline (fine on
 *   these inputs, not safe on hostile ones);
 * - `native-u`: the same with the `u` flag, what V8 runs slower;
 * - `re2js`: the pattern on re2js, as the service ran it before.
 * And `^[A-Z]{3}-[0-9]{4}$` (proven linear) as the service now runs it,
 * without `u` (compiler/regex/code-unit-source.ts), against `u`.
 *
 * First every contender must give the same answers on every input; then
 * tinybench times each (a sample is one pass over all inputs, figures are
 * per `test` call), and each contender's time over the baseline's is the
 * median of short rounds alternating the two (ABBA), which a busy machine
 * shifts far less than two tinybench figures taken a second apart. The
 * target: the DFA within 1.5x of native.
 *
 * `-- --quick` runs shorter (for a smoke check). Figures go to stdout only.
 */
import { RE2JS } from 're2js';
import { Bench } from 'tinybench';
import os from 'node:os';
import { compilePattern } from '../compiler/regex/compile-pattern.ts';
import { parsePattern } from '../compiler/regex/parse-pattern.ts';
import { toRe2Syntax } from '../compiler/regex/re2-syntax.ts';

const EMAIL = '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+[.][A-Za-z]{2,}$';
const CODE = '^[A-Z]{3}-[0-9]{4}$';
/** The DFA's time over native RegExp's (without `u`) on the e-mail pattern. */
const TARGET_RATIO = 1.5;

const EMAIL_INPUTS = [
  // valid
  'jane.doe@example.com',
  'j.smith+invoices@mail.example-company.co.uk',
  'first_last99%ops@sub.domain.example.org',
  'support@service-desk.example.travel',
  'a.very.long.local.part.with.dots@a-long-domain-name.example.museum',
  'x@y.io',
  // invalid
  'jane.doe.example.com',
  'jane.doe@example.c',
  'jane.doe@example.com ',
  'jane doe@example.com',
  'jane.doe@exa_mple.com',
  'j.smith+invoices@mail.example-company.co.u1',
  'jürgen.müller@example.de',
  'first.last@@example.org',
];
const CODE_INPUTS = ['ABC-1234', 'XYZ-0000', 'abc-1234', 'ABC1234', 'ABCD-1234', 'AB-12345', 'ABC-123', 'ÄBC-1234'];

/**
 * A matcher and its name. Timing loops call `matcher.test` from one call
 * site for all contenders, as the service's runtime calls every pattern's
 * matcher from `matches()`; no wrapper closure, whose call site's feedback
 * V8 would share between contenders built by the same function.
 */
interface Contender {
  name: string;
  matcher: { test(s: string): boolean };
}

let sink = 0;

function pass(contender: Contender, inputs: readonly string[]): void {
  for (const input of inputs) if (contender.matcher.test(input)) sink++;
}

function passes(contender: Contender, inputs: readonly string[], count: number): number {
  const start = performance.now();
  for (let i = 0; i < count; i++) pass(contender, inputs);
  return performance.now() - start;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Candidate over baseline: the median of `rounds` ABBA-alternated rounds of `count` passes each. */
function pairedRatio(baseline: Contender, candidate: Contender, inputs: readonly string[], rounds: number, count: number): number {
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const flip = round % 2 === 1;
    const first = passes(flip ? candidate : baseline, inputs, count);
    const second = passes(flip ? baseline : candidate, inputs, count);
    ratios.push(flip ? first / second : second / first);
  }
  return median(ratios);
}

function checkAgreement(contenders: readonly Contender[], inputs: readonly string[]): void {
  for (const input of inputs) {
    const answers = contenders.map((c) => c.matcher.test(input));
    if (answers.some((a) => a !== answers[0])) {
      throw new Error(`contenders disagree on ${JSON.stringify(input)}: ${contenders.map((c, i) => `${c.name}=${answers[i]}`).join(' ')}`);
    }
  }
}

function compiled(name: string, pattern: string, expectedRunner: string): Contender {
  const result = compilePattern(pattern);
  if (!result.ok) throw new Error(`${pattern}: ${result.message}`);
  const runner = result.runner.kind === 'regexp' ? `regexp/${result.runner.flags}` : result.runner.kind;
  if (runner !== expectedRunner) throw new Error(`${pattern} runs on ${runner}, not ${expectedRunner}`);
  return { name, matcher: result.matcher };
}

function re2js(pattern: string): Contender {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return { name: 're2js', matcher: RE2JS.compile(toRe2Syntax(parsed.ast)) };
}

function native(pattern: string, flags: '' | 'u'): Contender {
  return { name: flags === '' ? 'native' : 'native-u', matcher: new RegExp(pattern, flags) };
}

async function suite(title: string, baseline: Contender, others: readonly Contender[], inputs: readonly string[], quick: boolean): Promise<number[]> {
  const all = [baseline, ...others];
  checkAgreement(all, inputs);
  const bench = new Bench({ time: quick ? 100 : 600, warmupTime: quick ? 50 : 200, throws: true });
  for (const contender of all) bench.add(contender.name, () => pass(contender, inputs));
  await bench.run();
  const ratios = others.map((c) => pairedRatio(baseline, c, inputs, quick ? 41 : 201, 200));
  console.log(`\n${title} (${inputs.length} inputs; per test call)`);
  console.table(all.map((contender, i) => {
    const latency = bench.getTask(contender.name)!.result;
    if (latency.state !== 'completed') throw new Error(`${contender.name}: ${latency.state}`);
    return {
      matcher: contender.name,
      'median ns': Number(((latency.latency.p50 * 1e6) / inputs.length).toFixed(1)),
      'mean ns': Number(((latency.latency.mean * 1e6) / inputs.length).toFixed(1)),
      [`paired time / ${baseline.name}`]: i === 0 ? 1 : Number(ratios[i - 1].toFixed(2)),
    };
  }));
  return ratios;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const dfa = compiled('dfa', EMAIL, 'dfa');
  const [dfaRatio] = await suite(`e-mail-like ${EMAIL}`, native(EMAIL, ''), [dfa, native(EMAIL, 'u'), re2js(EMAIL)], EMAIL_INPUTS, quick);
  await suite(`proven linear ${CODE}`, native(CODE, 'u'), [compiled('service (no u)', CODE, 'regexp/')], CODE_INPUTS, quick);
  const verdict = dfaRatio <= TARGET_RATIO ? 'met' : 'MISSED';
  console.log(`\ntarget: dfa within ${TARGET_RATIO}x of native on the e-mail pattern: ${dfaRatio.toFixed(2)}x, ${verdict}`);
  if (sink < 0) console.log(sink);
}

await main();
