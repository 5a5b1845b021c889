/**
 * `compilePattern`: the regex policy applied to one pattern, and the engine
 * it runs on. Free of Node built-ins, so the standalone validator module can
 * bundle it for browsers.
 *
 * Engines: a pattern proven linear runs on native RegExp, without the `u`
 * flag when that provably changes no answer (code-unit-source.ts). Any
 * other pattern must compile on re2js, which decides what is accepted; it
 * then runs on its DFA (build-dfa.ts, dfa-matcher.ts) when that fits the
 * bounds below, else on re2js.
 */
import { RE2JS } from 're2js';
import { findUnsupported, parsePattern } from './parse-pattern.ts';
import { proveLinear } from './linear-time-check.ts';
import { toRe2Syntax } from './re2-syntax.ts';
import { MAX_PATTERN_SIZE, patternWeight, programSize } from './pattern-size.ts';
import { codeUnitSource } from './code-unit-source.ts';
import { buildDfa, type DfaBounds } from './build-dfa.ts';
import { dfaMatcher, type DfaTables } from './dfa-matcher.ts';

/** What a compiled pattern offers: search semantics, like `RegExp#test`. */
export interface PatternMatcher {
  test(s: string): boolean;
}

/**
 * What a compiled pattern runs on, in data that standalone modules rebuild
 * it from: native RegExp (with `u`, or without it when that provably gives
 * the same answers: code-unit-source.ts), the DFA of build-dfa.ts, or
 * re2js over a rewritten source (re2-syntax.ts).
 */
export type PatternRunner =
  | { kind: 'regexp'; source: string; flags: 'u' | '' }
  | { kind: 'dfa'; tables: DfaTables }
  | { kind: 're2js'; source: string };

/** A pattern that passed the policy, and the engine it runs on. */
export interface CompiledPattern {
  ok: true;
  matcher: PatternMatcher;
  /**
   * `native`: proven linear on V8's backtracking RegExp (linear-time-check.ts).
   * `re2`: needs a linear-time engine of the RE2 family: a DFA, or re2js when
   * the DFA would pass its bounds (`runner` tells which).
   */
  engine: 'native' | 're2';
  runner: PatternRunner;
  /** Its program size (pattern-size.ts). */
  size: number;
  /** What it counts for in the bounds of fields, rulesets and caches (pattern-size.ts). */
  weight: number;
}

/** A pattern refused by the policy; `offset` is 0-based in the pattern. */
export interface RefusedPattern {
  ok: false;
  code: 'UNSAFE_PATTERN' | 'INVALID_PATTERN' | 'TOO_LONG';
  message: string;
  offset?: number;
}

/** Default of docs/rule-language.md. */
const DEFAULT_MAX_PATTERN_LENGTH = 512;
/**
 * Compiled patterns are stateless and shared by all tenants; an LRU
 * bounded by count and by the weight of what it holds (a few megabytes).
 */
const CACHE_SIZE = 2000;
const CACHE_WEIGHT = 20 * MAX_PATTERN_SIZE;
const cache = new Map<string, CompiledPattern | RefusedPattern>();
let cachedWeight = 0;

/**
 * Compiles a tenant pattern under the regex policy.
 *
 * @example
 * const result = compilePattern('^\\d{3}-\\d{4}$');
 * if (result.ok) result.matcher.test('555-1234'); // true, engine 'native'
 * compilePattern('(a|a)*b'); // ok, engine 're2'
 * compilePattern('(a)\\1'); // { ok: false, code: 'UNSAFE_PATTERN', ... }
 */
export function compilePattern(
  pattern: string,
  limits: { maxPatternLength: number } = { maxPatternLength: DEFAULT_MAX_PATTERN_LENGTH },
): CompiledPattern | RefusedPattern {
  if (typeof pattern !== 'string') {
    return { ok: false, code: 'INVALID_PATTERN', message: 'the pattern must be a string' };
  }
  if (pattern.length > limits.maxPatternLength) {
    return {
      ok: false,
      code: 'TOO_LONG',
      message: `the pattern is ${pattern.length} characters long; the limit is ${limits.maxPatternLength}`,
    };
  }
  const cached = cache.get(pattern);
  if (cached !== undefined) {
    cache.delete(pattern);
    cache.set(pattern, cached);
    return cached;
  }
  const result = Object.freeze(compileUncached(pattern));
  cache.set(pattern, result);
  cachedWeight += sizeOf(result);
  while (cache.size > CACHE_SIZE || (cachedWeight > CACHE_WEIGHT && cache.size > 1)) {
    const oldest = cache.keys().next().value as string;
    cachedWeight -= sizeOf(cache.get(oldest)!);
    cache.delete(oldest);
  }
  return result;
}

function sizeOf(result: CompiledPattern | RefusedPattern): number {
  return result.ok ? result.weight : 0;
}

function compileUncached(pattern: string): CompiledPattern | RefusedPattern {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) {
    const at = parsed.error.offset === undefined ? '' : ` at offset ${parsed.error.offset}`;
    return {
      ok: false,
      code: 'INVALID_PATTERN',
      message: `invalid regular expression${at}: ${parsed.error.message}`,
      ...(parsed.error.offset === undefined ? {} : { offset: parsed.error.offset }),
    };
  }
  const unsupported = findUnsupported(parsed.ast);
  if (unsupported !== undefined) {
    return {
      ok: false,
      code: 'UNSAFE_PATTERN',
      message: `backreferences and lookaround are not supported (${unsupported.raw} at offset ${unsupported.start})`,
      offset: unsupported.start,
    };
  }
  const size = programSize(parsed.ast);
  if (size > MAX_PATTERN_SIZE) {
    return {
      ok: false,
      code: 'UNSAFE_PATTERN',
      message: `the pattern needs a program of about ${size} steps; the limit is ${MAX_PATTERN_SIZE} (a repetition count such as {1000} multiplies what it repeats)`,
    };
  }
  if (proveLinear(parsed.ast).linear) {
    const units = codeUnitSource(parsed.ast);
    const runner: PatternRunner = units === undefined
      ? { kind: 'regexp', source: pattern, flags: 'u' }
      : { kind: 'regexp', source: units, flags: '' };
    const matcher = new RegExp(runner.source, runner.flags);
    return { ok: true, matcher, engine: 'native', runner, size, weight: patternWeight(size, 'native') };
  }
  const source = toRe2Syntax(parsed.ast);
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(source);
  } catch (error) {
    // RE2 bounds repeat counts (1000) and program size; such patterns have
    // no linear-time engine here.
    return {
      ok: false,
      code: 'UNSAFE_PATTERN',
      message: `the pattern is too large for the linear-time engine (${(error as Error).message})`,
    };
  }
  const weight = patternWeight(size, 're2');
  // re2js decides what is accepted, the DFA only runs it faster when it can:
  // so changing the DFA's bounds never refuses a pattern saved before.
  const dfa = buildDfa(parsed.ast, dfaBounds(size));
  if (dfa.ok) {
    const matcher = dfaMatcher(dfa.tables, matcherKey(pattern));
    return { ok: true, matcher, engine: 're2', runner: { kind: 'dfa', tables: dfa.tables }, size, weight };
  }
  return { ok: true, matcher: re2Matcher(pattern, re2), engine: 're2', runner: { kind: 're2js', source }, size, weight };
}

/**
 * Bounds of a pattern's DFA; past any, it runs on re2js.
 *
 * - States: at most MAX_DFA_STATES. Everyday patterns need a few dozen (the
 *   e-mail-like pattern of bench/regex.bench.ts 7, an ISO date-time 31,
 *   `^.{8,64}$` 65); the patterns that need thousands are those whose DFA
 *   doubles with a repetition count (`(a|b)*a(a|b){n}` needs 2^n + 1
 *   states, past the bound from n = 11), where re2js (an NFA simulation)
 *   stays small. Each state is a row of the table, and costs a closure over
 *   the NFA per character class to build, at save time.
 * - Memory: the table (4 bytes a cell) within DFA_BYTES_PER_UNIT per unit of
 *   the pattern's size, half of what the service's memory estimate counts
 *   for a unit of weight, so the weight (pattern-size.ts) accounts for the
 *   DFA as it does for re2js's program.
 * - Build work: NFA instructions visited, DFA_WORK_PER_UNIT per unit plus a
 *   floor, so that giving up on a large pattern (`[\s\S]{0,1000}x` has only
 *   a thousand states, each holding hundreds of threads) costs about what
 *   compiling it for re2js does.
 */
function dfaBounds(size: number): DfaBounds {
  return {
    maxStates: MAX_DFA_STATES,
    maxCells: Math.floor((DFA_BYTES_PER_UNIT * size) / 4),
    maxWork: DFA_WORK_FLOOR + DFA_WORK_PER_UNIT * size,
    maxInstructions: 4 * MAX_PATTERN_SIZE,
  };
}

const MAX_DFA_STATES = 2_000;
const DFA_BYTES_PER_UNIT = 100;
const DFA_WORK_PER_UNIT = 10;
const DFA_WORK_FLOOR = 10_000;

/**
 * What the DFA and re2js matchers of `pattern` return from `toString()`:
 * Ajv keys its pattern cache by it, so it must differ per pattern.
 *
 * @example
 * matcherKey('(a|a)*b'); // '/(a|a)*b/u'
 */
export function matcherKey(pattern: string): string {
  return `/${pattern}/u`;
}

/**
 * The matcher of a pattern from its runner, as `compilePattern` made it:
 * for a thread that received the runner rather than compiled the pattern
 * (the parser, the linear-time proof and the DFA construction are not run
 * again).
 *
 * @example
 * const compiled = compilePattern('(a|a)*b');
 * if (compiled.ok) runnerMatcher('(a|a)*b', compiled.runner).test('aab'); // true
 */
export function runnerMatcher(pattern: string, runner: PatternRunner): PatternMatcher {
  switch (runner.kind) {
    case 'regexp':
      return new RegExp(runner.source, runner.flags);
    case 'dfa':
      return dfaMatcher(runner.tables, matcherKey(pattern));
    case 're2js':
      return re2Matcher(pattern, RE2JS.compile(runner.source));
  }
}

function re2Matcher(pattern: string, re2: RE2JS): PatternMatcher {
  return Object.freeze({
    test: (s: string): boolean => re2.test(String(s)),
    toString: (): string => matcherKey(pattern),
  });
}

/**
 * The pattern engine in ajv's `code.regExp` shape (ajv calls it with the `u`
 * flag, from `unicodeRegExp`): patterns go through the policy; refused ones
 * throw a clear Error.
 *
 * @example
 * patternEngine('^\\d+$', 'u').test('42'); // true
 */
export function patternEngine(pattern: string, flags: string): PatternMatcher {
  if (flags !== 'u') throw new Error(`regular expression flags "${flags}" are not supported; only "u" is`);
  const result = compilePattern(pattern);
  if (!result.ok) throw new Error(`${result.code}: pattern ${JSON.stringify(pattern)}: ${result.message}`);
  return result.matcher;
}
