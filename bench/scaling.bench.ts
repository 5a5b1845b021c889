/**
 * Scaling benchmark (`npm run bench:scaling`): how the validator's costs
 * grow with the size of a context.
 *
 * 1. In process, with tinybench, for contexts of 10, 100, 1000 and 5000
 *    rules (copies of the loan rules, `suites/generated-ruleset.ts`):
 *    compile time, the first validation, and validation of the passing
 *    and failing payloads after a warm-up (the steady state up to 1000
 *    rules; at 5000 still on the way down). The baseline, measured in the same
 *    run, is the hand-written 20-rule loan validator: "x hand per rule"
 *    is the compiled time per rule over the hand-written time per rule, so
 *    linear growth at the engine's own efficiency reads as a constant.
 * 2. Memory per cached validator: the heap after a full gc with N more
 *    validators held (what the validator cache keeps for each: compiled
 *    function with the source V8 keeps for it, ruleset; each called once,
 *    as a served context is),
 *    minus the heap before, over N.
 * 3. Code footprint: distinct 100-rule validators called in turn against
 *    one of them alone (FootprintFigure).
 * 4. Over HTTP (the service in a child process): the first validation
 *    after a publish against cached validations of the same context. The
 *    edit changes a failure message, and the first answer must carry it,
 *    so it is certain to have run on the new version.
 *
 * `--quick` measures sizes up to 1000, fewer validators and publishes.
 */
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Bench, type Task } from 'tinybench';
import type { CompiledRuleset } from '../compiler/types.ts';
import { compileValidator } from '../src/validators/compile-validator.ts';
import { compileOrThrow } from './engines/compiled.ts';
import { validateLoanByHand } from './engines/hand-written-loan.ts';
import { fixed, int, median, textTable } from './tools/report-table.ts';
import { callApi, editAndPublish, publishContext } from './tools/rules-api.ts';
import { startService, type ServiceProcess } from './tools/service-process.ts';
import { generateRuleset } from './suites/generated-ruleset.ts';
import { loanApplicationSuite as suite } from './suites/loan-application.ts';

export interface ScalingBenchOptions {
  /** Sizes up to 1000 rules, fewer samples. */
  quick?: boolean;
  print?: boolean;
  /** Include the HTTP first-request measurement (starts the service); default true. */
  http?: boolean;
}

export interface SizeFigure {
  rules: number;
  compileMedianMs: number;
  compileMinMs: number;
  compileRuns: number;
  compilePerRuleUs: number;
  /** The first call of a freshly compiled validator, before V8 has optimised it. */
  firstValidateUs: number;
  validatePassingUs: number;
  validateFailingUs: number;
  /** Passing-payload time per rule over the hand-written validator's time per rule. */
  vsHandPerRule: number;
  /** Per-rule validation time over the previous size's; null for the first. */
  perRuleGrowth: number | null;
}

export interface MemoryFigure {
  rules: number;
  validators: number;
  bytesPerValidator: number;
  bytesPerRule: number;
}

export interface FirstRequestFigure {
  rules: number;
  publishes: number;
  /** Median of the publish calls (they return once the new version is live). */
  publishMs: number;
  firstServerMs: number;
  firstRoundTripMs: number;
  cachedServerMs: number;
  cachedRoundTripMs: number;
  /** First over cached server time (Server-Timing), medians. */
  ratio: number;
}

/**
 * Validation time per rule of one context alone against many contexts
 * called in turn, as in a process serving many tenants. The per-rule cost
 * grows with the machine code a validation runs through, not with the
 * size of one context: `contexts` x `rules` rules in distinct validators
 * cost per rule about what one context of that many rules costs. Like
 * the 5000-rule size, it is measured before V8 has optimised everything
 * (bench/README.md, "Large contexts").
 */
export interface FootprintFigure {
  /** Rules per context. */
  rules: number;
  /** Distinct validators called one after another. */
  contexts: number;
  /** One of them called alone, per rule (µs). */
  aloneUsPerRule: number;
  /** All of them called in turn, per rule (µs). */
  inTurnUsPerRule: number;
  /** In turn over alone. */
  ratio: number;
}

export interface ScalingBenchResult {
  quick: boolean;
  generatedAt: string;
  environment: { node: string; platform: string; arch: string; cpu: string; cores: number; loadAverage: number };
  /** The baseline: the hand-written 20-rule loan validator, passing payload. */
  handWrittenPassingUs: number;
  sizes: SizeFigure[];
  memory: MemoryFigure[];
  footprint: FootprintFigure[];
  firstRequest: FirstRequestFigure[];
}

// Results land here so V8 cannot drop a call whose value is never used.
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read: V8 cannot drop a call whose result is stored
let sink: unknown;

/** The median sample: a gc pause or a preemption on a shared machine moves the mean, not the median. */
function latencyMs(task: Task): number {
  const result = task.result;
  if (result.state !== 'completed' && result.state !== 'aborted-with-statistics') {
    throw new Error(`benchmark task "${task.name}" did not complete: ${result.state}`);
  }
  return result.latency.p50;
}

/** Median per call (µs) of `run`, batched so that one sample lasts well above the timer's resolution. */
async function timeCalls(name: string, run: () => unknown, callUs: number, quick: boolean): Promise<number> {
  const batch = Math.max(1, Math.round(200 / Math.max(callUs, 0.05)));
  const bench = new Bench({ time: quick ? 200 : 600, warmupTime: quick ? 50 : 150, iterations: 5, throws: true });
  bench.add(name, () => {
    for (let i = 0; i < batch; i++) sink = run();
  });
  await bench.run();
  return (latencyMs(bench.getTask(name)!) * 1000) / batch;
}

async function measureSizes(sizes: number[], handUs: number, quick: boolean): Promise<SizeFigure[]> {
  // The compiler's own code reaches its optimised tiers before any timing.
  for (let i = 0; i < 3; i++) compileOrThrow(generateRuleset(100));
  const figures: SizeFigure[] = [];
  for (const size of sizes) {
    const rules = generateRuleset(size);
    let compiled: CompiledRuleset | undefined;
    const runs = size >= 5000 ? 3 : size >= 1000 ? (quick ? 3 : 5) : quick ? 10 : 20;
    const bench = new Bench({ time: 0, iterations: runs, warmupIterations: 1, warmupTime: 0, retainSamples: true, throws: true });
    bench.add('compile', () => {
      compiled = compileOrThrow(rules);
    });
    await bench.run();
    const compileTask = bench.getTask('compile')!;
    const samples = compileTask.result.state === 'completed' ? compileTask.result.latency.samples ?? [] : [];
    const { validate } = compiled!;
    const coldStart = performance.now();
    sink = validate(suite.payloads.passing, suite.now);
    const firstValidateUs = (performance.now() - coldStart) * 1000;
    // The rule functions of a large validator are optimised by V8 only after
    // thousands of calls, on a background thread that a busy machine starves.
    // At 5000 rules this warm-up does not reach the steady state, which takes
    // far longer (bench/README.md, "Large contexts"): the figure is an upper
    // bound there.
    const deadline = performance.now() + (quick ? 3000 : 10_000);
    for (let i = 0; i < 20_000 && performance.now() < deadline; i++) sink = validate(suite.payloads.passing, suite.now);
    const estimateUs = firstValidateUs / 10;
    const validatePassingUs = await timeCalls(`validate ${size} passing`, () => validate(suite.payloads.passing, suite.now), estimateUs, quick);
    const validateFailingUs = await timeCalls(`validate ${size} failing`, () => validate(suite.payloads.failing, suite.now), estimateUs, quick);
    const compileMedianMs = median(samples);
    const previous = figures.at(-1);
    const perRule = validatePassingUs / size;
    figures.push({
      rules: size, compileMedianMs, compileMinMs: Math.min(...samples), compileRuns: samples.length,
      compilePerRuleUs: (compileMedianMs * 1000) / size, firstValidateUs, validatePassingUs, validateFailingUs,
      vsHandPerRule: perRule / (handUs / suite.rules.length),
      perRuleGrowth: previous === undefined ? null : perRule / (previous.validatePassingUs / previous.rules),
    });
  }
  return figures;
}

/** See FootprintFigure. Each context holds different copies of the rules, so every validator has its own code. */
async function measureFootprint(rules: number, contexts: number, quick: boolean): Promise<FootprintFigure> {
  const all = generateRuleset(rules * contexts);
  const validators = Array.from({ length: contexts }, (_, i) => compileOrThrow(all.slice(i * rules, (i + 1) * rules)).validate);
  const inTurn = (): unknown => {
    let last: unknown;
    for (const validate of validators) last = validate(suite.payloads.passing, suite.now);
    return last;
  };
  // The same warm-up as measureSizes: fifty validators are not all optimised
  // by its end, so this is an upper bound too.
  const deadline = performance.now() + (quick ? 3000 : 10_000);
  for (let i = 0; i < 20_000 && performance.now() < deadline; i++) sink = inTurn();
  const estimateUs = (rules * contexts) / 20;
  const inTurnUs = await timeCalls(`${contexts} x ${rules} rules in turn`, inTurn, estimateUs, quick);
  const aloneUs = await timeCalls(`${rules} rules alone`, () => validators[0](suite.payloads.passing, suite.now), estimateUs / contexts, quick);
  const aloneUsPerRule = aloneUs / rules;
  const inTurnUsPerRule = inTurnUs / (rules * contexts);
  return { rules, contexts, aloneUsPerRule, inTurnUsPerRule, ratio: inTurnUsPerRule / aloneUsPerRule };
}

/** `gc()`, exposed at run time when node was started without --expose-gc. */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function heapAfterGc(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function measureMemory(configs: { rules: number; validators: number }[]): Promise<MemoryFigure[]> {
  const gc = collector();
  const figures: MemoryFigure[] = [];
  for (const { rules: size, validators: count } of configs) {
    const rules = generateRuleset(size);
    const build = async (i: number): Promise<unknown> => {
      // What the cache holds per context: its own copy of the live rules, the
      // compiled function (whose source V8 keeps). Called once, as a served context is.
      // Rule names differ per validator, so the sources differ: V8 would
      // otherwise share one compiled script among identical sources, which
      // two tenants' contexts rarely are.
      const own = rules.map((rule) => ({ ...structuredClone(rule), name: `${rule.name} (context ${i})` }));
      const outcome = await compileValidator({ tenantId: 't', context: `c${i}`, rulesetVersion: 1, rules: own }, {});
      if (outcome.validator === undefined) throw new Error(`${size} rules did not compile`);
      sink = outcome.validator.validate(suite.payloads.passing, suite.now);
      return outcome.validator;
    };
    // Shared, bounded compiler memos are filled first, so they are not counted per validator.
    sink = await build(-1);
    const held: unknown[] = [];
    const before = heapAfterGc(gc);
    for (let i = 0; i < count; i++) held.push(await build(i));
    const after = heapAfterGc(gc);
    sink = held.length;
    const bytesPerValidator = (after - before) / count;
    figures.push({ rules: size, validators: count, bytesPerValidator, bytesPerRule: bytesPerValidator / size });
    held.length = 0;
  }
  return figures;
}

async function timedPost(service: ServiceProcess, body: string): Promise<{ json: any; serverMs: number; roundTripMs: number }> {
  const start = performance.now();
  const response = await fetch(`${service.baseUrl}/api/v1/validation/validate`, {
    method: 'POST', headers: service.headers, body, signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  const roundTripMs = performance.now() - start;
  if (response.status !== 200) throw new Error(`validate answered ${response.status}: ${text.slice(0, 500)}`);
  const timing = /dur=([0-9.]+)/.exec(response.headers.get('server-timing') ?? '');
  return { json: JSON.parse(text), serverMs: timing === null ? Number.NaN : Number(timing[1]), roundTripMs };
}

async function measureFirstRequest(service: ServiceProcess, size: number, publishes: number, cached: number): Promise<FirstRequestFigure> {
  const context = `first-request-${size}`;
  const rules = size === suite.rules.length ? [...suite.rules] : generateRuleset(size);
  const stored = await publishContext(service, context, rules);
  const target = rules[0];
  const body = JSON.stringify({ context, payload: suite.payloads.failing });
  for (let i = 0; i < 5; i++) await timedPost(service, body);
  const figures = { publish: [] as number[], firstServer: [] as number[], firstTrip: [] as number[], cachedServer: [] as number[], cachedTrip: [] as number[] };
  for (let k = 0; k < publishes; k++) {
    const marker = `(edit ${k})`;
    const start = performance.now();
    await editAndPublish(service, context, stored.get(target.code)!, { ...target, message: `${target.message} ${marker}` });
    figures.publish.push(performance.now() - start);
    const first = await timedPost(service, body);
    const failure = (first.json.failures as { ruleCode: string; message: string }[]).find((f) => f.ruleCode === target.code);
    if (failure === undefined || !failure.message.endsWith(marker)) {
      throw new Error(`the first validation after publish ${k} did not run on the new version: ${JSON.stringify(failure)}`);
    }
    figures.firstServer.push(first.serverMs);
    figures.firstTrip.push(first.roundTripMs);
    for (let i = 0; i < cached; i++) {
      const answer = await timedPost(service, body);
      figures.cachedServer.push(answer.serverMs);
      figures.cachedTrip.push(answer.roundTripMs);
    }
  }
  const firstServerMs = median(figures.firstServer);
  const cachedServerMs = median(figures.cachedServer);
  return {
    rules: size, publishes, publishMs: median(figures.publish), firstServerMs, firstRoundTripMs: median(figures.firstTrip),
    cachedServerMs, cachedRoundTripMs: median(figures.cachedTrip), ratio: firstServerMs / cachedServerMs,
  };
}

/**
 * Runs the scaling benchmark and returns its figures.
 *
 * @example
 * const { sizes } = await runScalingBench({ quick: true, http: false });
 */
export async function runScalingBench(options: ScalingBenchOptions = {}): Promise<ScalingBenchResult> {
  const quick = options.quick === true;
  const handWrittenPassingUs = await timeCalls('hand-written', () => validateLoanByHand(suite.payloads.passing, suite.now), 3, quick);
  const sizes = await measureSizes(quick ? [10, 100, 1000] : [10, 100, 1000, 5000], handWrittenPassingUs, quick);
  const memory = await measureMemory(quick
    ? [{ rules: 20, validators: 50 }, { rules: 1000, validators: 3 }]
    : [{ rules: 20, validators: 200 }, { rules: 100, validators: 50 }, { rules: 1000, validators: 10 }]);
  const footprint = [await measureFootprint(100, quick ? 10 : 50, quick)];
  const firstRequest: FirstRequestFigure[] = [];
  if (options.http !== false) {
    const service = await startService();
    try {
      firstRequest.push(await measureFirstRequest(service, suite.rules.length, quick ? 3 : 10, quick ? 10 : 20));
      if (!quick) firstRequest.push(await measureFirstRequest(service, 1000, 5, 10));
      // The service must still answer management calls after the load above.
      await callApi(service, 'GET', '/api/v1/contexts');
    } finally {
      await service.stop();
    }
  }
  const result: ScalingBenchResult = {
    quick, generatedAt: new Date().toISOString(),
    environment: {
      node: process.version, platform: process.platform, arch: process.arch,
      cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), loadAverage: os.loadavg()[0],
    },
    handWrittenPassingUs, sizes, memory, footprint, firstRequest,
  };
  if (options.print !== false) printScalingResult(result);
  return result;
}

/** The scaling figures as tables (shared with the summary writer). */
export function scalingTables(r: ScalingBenchResult): { header: string[]; rows: string[][] }[] {
  return [
    {
      header: ['rules', 'compile ms', 'min ms', 'compile us/rule', 'first validate us', 'validate pass us', 'validate fail us', 'x hand per rule', 'per-rule growth'],
      rows: r.sizes.map((s) => [
        String(s.rules), fixed(s.compileMedianMs, 1), fixed(s.compileMinMs, 1), fixed(s.compilePerRuleUs, 0), int(s.firstValidateUs),
        fixed(s.validatePassingUs, 2), fixed(s.validateFailingUs, 2), fixed(s.vsHandPerRule, 2),
        s.perRuleGrowth === null ? '-' : fixed(s.perRuleGrowth, 2),
      ]),
    },
    {
      header: ['rules', 'validators held', 'KiB per validator', 'bytes per rule'],
      rows: r.memory.map((m) => [String(m.rules), String(m.validators), fixed(m.bytesPerValidator / 1024, 1), int(m.bytesPerRule)]),
    },
    {
      header: ['rules per context', 'contexts', 'alone us/rule', 'in turn us/rule', 'in turn / alone'],
      rows: r.footprint.map((f) => [String(f.rules), String(f.contexts), fixed(f.aloneUsPerRule, 3), fixed(f.inTurnUsPerRule, 3), fixed(f.ratio, 2)]),
    },
    {
      header: ['rules', 'publishes', 'publish ms', 'first server ms', 'first round trip ms', 'cached server ms', 'cached round trip ms', 'first / cached'],
      rows: r.firstRequest.map((f) => [
        String(f.rules), String(f.publishes), fixed(f.publishMs, 1), fixed(f.firstServerMs, 2), fixed(f.firstRoundTripMs, 2),
        fixed(f.cachedServerMs, 2), fixed(f.cachedRoundTripMs, 2), fixed(f.ratio, 2),
      ]),
    },
  ];
}

function printScalingResult(r: ScalingBenchResult): void {
  const env = r.environment;
  console.log(`\nScaling benchmark${r.quick ? ' (quick)' : ''}: ${env.node} ${env.platform}/${env.arch}, ${env.cpu}, ${env.cores} cores, load ${fixed(env.loadAverage, 1)}`);
  console.log(`baseline: hand-written 20-rule loan validator, passing payload, ${fixed(r.handWrittenPassingUs, 2)} us per call\n`);
  const [sizes, memory, footprint, first] = scalingTables(r);
  console.log(textTable(sizes));
  console.log('(x hand per rule: compiled time per rule over the hand-written time per rule; per-rule growth: over the previous size)\n');
  console.log(textTable(memory));
  console.log('(heap after full gc with N more validators cached, minus before, over N)\n');
  console.log(textTable(footprint));
  console.log('(passing payload; distinct validators called one after another, against one of them alone: the code a validation runs through, not one context\'s size, sets the cost per rule)\n');
  if (first.rows.length > 0) {
    console.log(textTable(first));
    console.log('(first validation after each publish against cached ones, failing payload; medians)');
  }
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  await runScalingBench({ quick: process.argv.includes('--quick'), http: !process.argv.includes('--no-http') });
}
