/**
 * From a live ruleset to a CompiledValidator, plus the bookkeeping fields
 * the management API reports and the cost profile requests are weighed by.
 *
 * The service compiles on a thread of the compile lane (src/pool/compile-lane.ts):
 * there `buildValidator` runs the compiler and sends back the generated
 * code, its refs as plain data (compiler/portable/) and the figures; the
 * main thread's `installValidator` evaluates that code once, a part a
 * turn of the event loop, and parses no rule. `compileValidator` does both
 * in one place, for a thread that compiles for its own use (the management
 * tasks) and for tools.
 */
import { compileRulesetSteps, instantiateGeneratedSteps, type GeneratedCode } from '../../compiler/compile-ruleset.ts';
import { portableRefs, rebuildRefsSteps, type PortableRefs } from '../../compiler/portable/portable-refs.ts';
import { runSteps, type TurnSteps } from '../../compiler/steps.ts';
import type { CompileError, CompilerLimits, ValidatorFn } from '../../compiler/types.ts';
import type { CompiledValidator } from './compiled-validator.ts';
import type { LiveRuleset } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import type { CostProfile } from '../../compiler/index.ts';
import { runInSlices, runInTurns } from '../time-slices.ts';
import { cachedEvaluator, codeCacheRecorder, type CodeCacheUse } from './code-cache.ts';

/** What a compile produced: a validator, or the reasons there is none. */
export interface CompileOutcome {
  validator?: CompiledValidator;
  errors: CompileError[];
  /** Time spent compiling, without the waits between slices. */
  compileMs: number;
  /** What the validator was installed from, when it came from another thread (`installValidator`). */
  build?: InstallableBuild;
}

/**
 * Who waits for a compile: `validation`, requests of a context not yet
 * compiled (cache misses, the warm start, a recompile after a change
 * notice); `change`, an admin's lifecycle operation (publish, rollback,
 * archive, import, POST /recompile). The compile lane serves the first
 * before the second (src/pool/compile-lane.ts).
 */
export type CompilePriority = 'validation' | 'change';

/** Runs a compile's steps: in slices on the event loop (the default), or at once on a management thread. */
export type StepRunner = <T>(steps: Generator<unknown, T, void>) => Promise<T>;

/**
 * Compiles a ruleset. A ruleset with any compile error yields no validator:
 * leaving a broken rule out silently would validate payloads against less
 * than what was published.
 */
export async function compileValidator(
  ruleset: LiveRuleset, limits: Partial<CompilerLimits>, run: StepRunner = (steps) => runInSlices(steps),
): Promise<CompileOutcome> {
  const compiled = await run(compileRulesetSteps(ruleset.rules, { limits }));
  if (compiled.errors.length > 0) return { errors: compiled.errors, compileMs: compiled.compileMs };
  // The compiler worked the cost profile out with the plans, so that no request pays for it.
  const figures = { ruleCount: compiled.ruleCount, footprint: compiled.footprint, compileMs: compiled.compileMs, costProfile: compiled.costProfile };
  const validator = validatorOf(ruleset, compiled.validate, () => compiled.source, figures);
  return { errors: [], validator, compileMs: compiled.compileMs };
}

/** What a compile on another thread sends back (plain data): the errors, or what installing its validator takes. */
export interface ValidatorBuild {
  errors: CompileError[];
  /** Time spent compiling on the thread. */
  compileMs: number;
  /** Absent when the ruleset does not compile. */
  generated?: {
    code: GeneratedCode;
    refs: PortableRefs;
    figures: ValidatorFigures;
    /** V8's code cache of each of `sourcesOf(code)`, made on the compiling thread (code-cache.ts); null where there is none. */
    codeCache?: (Uint8Array | null)[];
  };
}

/** What installing a validator built on another thread takes: plain data, a few strings and the refs. */
export type InstallableBuild = NonNullable<ValidatorBuild['generated']>;

/** What a validator reports and is weighed by, worked out where it compiled. */
interface ValidatorFigures {
  ruleCount: number;
  footprint: { textLength: number; patternWeight: number };
  compileMs: number;
  costProfile: CostProfile;
}

/**
 * Compiles a ruleset for another thread to install (`installValidator`):
 * the compile of `compileValidator`, at once (a compile thread runs nothing
 * else meanwhile), ending in plain data.
 */
export async function buildValidator(ruleset: Pick<LiveRuleset, 'rules'>, limits: Partial<CompilerLimits>): Promise<ValidatorBuild> {
  const recorder = codeCacheRecorder();
  const compiled = await runAtOnce(compileRulesetSteps(ruleset.rules, { limits, evaluate: recorder.evaluate }));
  if (compiled.errors.length > 0) return { errors: compiled.errors, compileMs: compiled.compileMs };
  const { layout, origins } = compiled.generated();
  return {
    errors: [],
    compileMs: compiled.compileMs,
    generated: {
      code: layout,
      refs: portableRefs(origins),
      figures: { ruleCount: compiled.ruleCount, footprint: compiled.footprint, compileMs: compiled.compileMs, costProfile: compiled.costProfile },
      codeCache: recorder.cachesOf(sourcesOf(layout)),
    },
  };
}

/** The factory sources of generated code, in the order its code cache lists them. */
function sourcesOf(code: GeneratedCode): string[] {
  return code.kind === 'whole' ? [code.source] : code.partSources;
}

/** How an install shared the event loop, for the metrics. */
export interface InstallFigures {
  /** Parts of generated code instantiated: 1 for a ruleset in one piece. */
  parts: number;
  /** Turns of the event loop the install ran in. */
  slices: number;
  /** Its longest, in ms. */
  longestSliceMs: number;
  /** Parts evaluated from the compiling thread's code cache, and parts whose cache V8 rejected (compiled anew). */
  codeCache: CodeCacheUse;
}

/** Told of each install (rules_validator_install_* metrics). */
export type InstallObserver = (figures: InstallFigures) => void;

/**
 * The validator of a build from another thread: its refs rebuilt and its
 * generated code evaluated once (V8 compiles each part as it is called
 * once), nothing parsed or planned. Large or small, a build is installed
 * the same way, in slices of TUNING.installSliceMs with a turn of the event
 * loop of its own for each part (a small build is one slice): installing
 * a 5,000-rule build at once held the event loop for a few hundred
 * milliseconds. The validator is returned, and so switched to, only when
 * every part is ready; until then the one cached keeps answering.
 *
 * @example
 * const { validator } = await installValidator(ruleset, await lane.compile(ruleset, limits, 'validation'));
 */
export async function installValidator(ruleset: LiveRuleset, build: ValidatorBuild, observer?: InstallObserver): Promise<CompileOutcome> {
  if (build.generated === undefined) return { errors: build.errors, compileMs: build.compileMs };
  const { code, refs, figures, codeCache } = build.generated;
  const installed = await runInTurns(installSteps(code, refs, codeCache), TUNING.installSliceMs.value);
  const { validate, source, codeCacheUse } = installed.value;
  observer?.({
    parts: code.kind === 'whole' ? 1 : code.partSources.length, slices: installed.slices, longestSliceMs: installed.longestSliceMs, codeCache: codeCacheUse,
  });
  const validator = validatorOf(ruleset, validate, source, figures);
  return { errors: [], validator, compileMs: build.compileMs, build: build.generated };
}

/**
 * The validator of a build, installed at once: on a management thread,
 * which runs nothing else meanwhile (the go-live stored tests evaluate the
 * very build the main thread installs, rather than compiling the rules again).
 */
export function installAtOnce(ruleset: LiveRuleset, build: InstallableBuild): CompiledValidator {
  const { validate, source } = runSteps(installSteps(build.code, build.refs, build.codeCache));
  return validatorOf(ruleset, validate, source, build.figures);
}

/**
 * What a validator was compiled from, kept with it only while an operation
 * asks for it (`keepBuild` ... `dropBuild`: the go-live stored tests of a
 * publish): its build when it came from another thread, else its rules. A
 * cached validator must hold neither: V8 keeps the text of every function
 * it compiled, and the rules as objects are heap that every full
 * collection of the main thread marks (compiled-validator.ts).
 */
export interface KeptBuild {
  readonly ruleset: LiveRuleset;
  readonly build?: InstallableBuild;
}

const keptBuilds = new WeakMap<CompiledValidator, KeptBuild>();

/** Keeps what `validator` was compiled from until `dropBuild`. */
export function keepBuild(validator: CompiledValidator, kept: KeptBuild): void {
  keptBuilds.set(validator, kept);
}

/** What `validator` was compiled from, if it was kept. */
export function keptBuildOf(validator: CompiledValidator): KeptBuild | undefined {
  return keptBuilds.get(validator);
}

/** Lets what was kept with `validator` go. */
export function dropBuild(validator: CompiledValidator): void {
  keptBuilds.delete(validator);
}

/** The refs rebuilt, then the parts instantiated from their code cache where there is one, in steps (each part's ending its slice). */
function* installSteps(
  code: GeneratedCode, refs: PortableRefs, codeCache: InstallableBuild['codeCache'],
): TurnSteps<{ validate: ValidatorFn; source: () => string; codeCacheUse: CodeCacheUse }> {
  const rebuilt = yield* rebuildRefsSteps(refs);
  const { evaluate, use } = cachedEvaluator(sourcesOf(code), codeCache);
  return { ...(yield* instantiateGeneratedSteps(code, rebuilt, evaluate)), codeCacheUse: use };
}

/** The cached validator of a compiled ruleset: its name and version, not its rules (compiled-validator.ts). */
function validatorOf(ruleset: LiveRuleset, validate: ValidatorFn, readSource: () => string, figures: ValidatorFigures): CompiledValidator {
  return Object.freeze({
    tenantId: ruleset.tenantId,
    context: ruleset.context,
    rulesetVersion: ruleset.rulesetVersion,
    validate,
    // A getter, as in the compiler: read when an admin asks, not kept as a copy.
    get source() {
      return readSource();
    },
    ruleCount: figures.ruleCount,
    estimatedBytes: estimatedBytes(figures.footprint),
    compileMs: figures.compileMs,
    compiledAt: new Date().toISOString(),
    costProfile: figures.costProfile,
  });
}

/** Runs steps to the end at once, as a StepRunner. */
// eslint-disable-next-line @typescript-eslint/require-await -- a StepRunner returns a promise
export async function runAtOnce<T>(steps: Generator<unknown, T, void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * A compiled validator under another ruleset version of the same rules
 * (early-compile.ts): the compiled function, its figures and its cost
 * profile are the same; the version is the new one.
 */
export function withVersion(validator: CompiledValidator, rulesetVersion: number): CompiledValidator {
  return Object.freeze({
    tenantId: validator.tenantId,
    context: validator.context,
    rulesetVersion,
    validate: validator.validate,
    get source() {
      return validator.source;
    },
    ruleCount: validator.ruleCount,
    estimatedBytes: validator.estimatedBytes,
    compileMs: validator.compileMs,
    compiledAt: validator.compiledAt,
    costProfile: validator.costProfile,
  });
}

/**
 * Heap a cached validator holds, estimated from what it grows with. Measured
 * (heap after a full GC, bench/scaling.bench.ts and scratch runs at the
 * limits): 15-20 bytes per character of rule text for expressions,
 * messages and schemas alike (the rules' own copy, IR, generated code and
 * V8's compiled functions), 100-200 bytes per unit of regex weight on the
 * linear-time engine, and a few kilobytes per validator whatever its size.
 * A validator no longer keeps its rules (compiled-validator.ts), about a
 * fifth of that for 5,000 rules (2 of 11 MB), so the estimate is now on
 * the high side.
 */
export function estimatedBytes(footprint: { textLength: number; patternWeight: number }): number {
  return TUNING.validatorBaseBytes.value
    + TUNING.validatorBytesPerTextCharacter.value * footprint.textLength
    + TUNING.validatorBytesPerPatternWeight.value * footprint.patternWeight;
}
