/**
 * `compilePattern`: the regex policy applied to one pattern. Free of Node
 * built-ins, so the standalone validator module can bundle it for browsers.
 */
import { RE2JS } from 're2js';
import { findUnsupported, parsePattern } from './parse-pattern.ts';
import { proveLinear } from './linear-time-check.ts';
import { toRe2Syntax } from './re2-syntax.ts';
import { MAX_PATTERN_SIZE, patternWeight, programSize } from './pattern-size.ts';

/** What a compiled pattern offers: search semantics, like `RegExp#test`. */
export interface PatternMatcher {
  test(s: string): boolean;
}

/** A pattern that passed the policy, and the engine it runs on. */
export interface CompiledPattern {
  ok: true;
  matcher: PatternMatcher;
  engine: 'native' | 're2';
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

/** Default of product.md 3.4. */
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
    return { ok: true, matcher: new RegExp(pattern, 'u'), engine: 'native', size, weight: patternWeight(size, 'native') };
  }
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(toRe2Syntax(parsed.ast));
  } catch (error) {
    // RE2 bounds repeat counts (1000) and program size; such patterns have
    // no linear-time engine here.
    return {
      ok: false,
      code: 'UNSAFE_PATTERN',
      message: `the pattern is too large for the linear-time engine (${(error as Error).message})`,
    };
  }
  return { ok: true, matcher: re2Matcher(pattern, re2), engine: 're2', size, weight: patternWeight(size, 're2') };
}

function re2Matcher(pattern: string, re2: RE2JS): PatternMatcher {
  return Object.freeze({
    test: (s: string): boolean => re2.test(String(s)),
    // ajv keys its pattern cache by `toString()`: it must differ per pattern.
    toString: (): string => `/${pattern}/u`,
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
