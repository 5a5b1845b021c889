/**
 * The DFA engine for patterns not proven linear (build-dfa.ts run by
 * dfa-matcher.ts), and native RegExp without the `u` flag for proven ones
 * (code-unit-source.ts): which patterns run where, that the DFA answers
 * `test` as JavaScript does (against V8 on short inputs and re2js on long
 * ones, with astral characters, lone surrogates and line terminators), that
 * dropping `u` never changes an answer, and that the DFA's work is linear
 * on 1 MB inputs (steps counted by the matcher itself).
 */
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import type { AST } from '@eslint-community/regexpp';
import { buildDfa } from '../../compiler/regex/build-dfa.ts';
import { codeUnitSource } from '../../compiler/regex/code-unit-source.ts';
import { compilePattern, type CompiledPattern } from '../../compiler/regex/compile-pattern.ts';
import { dfaMatcher, dfaSearch, type DfaMatcher, type DfaTables } from '../../compiler/regex/dfa-matcher.ts';
import { parsePattern } from '../../compiler/regex/parse-pattern.ts';
import { toRe2Syntax } from '../../compiler/regex/re2-syntax.ts';
import { specTest } from './regex-oracle.ts';

function parse(pattern: string): AST.Pattern {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) throw new Error(`test pattern does not parse: ${pattern}`);
  return parsed.ast;
}

/** Bounds far above the service's, so that tests reach the DFA of every small pattern. */
const GENEROUS = { maxStates: 20_000, maxCells: 2_000_000, maxWork: 20_000_000, maxInstructions: 20_000 };

/** The DFA tables of `pattern` under generous bounds, whatever engine the service would pick. */
function tablesOf(pattern: string): DfaTables | undefined {
  const built = buildDfa(parse(pattern), GENEROUS);
  return built.ok ? built.tables : undefined;
}

function dfaOf(pattern: string): DfaMatcher {
  const tables = tablesOf(pattern);
  if (tables === undefined) throw new Error(`no DFA for ${pattern}`);
  return dfaMatcher(tables, pattern);
}

function re2Of(pattern: string): RE2JS {
  return RE2JS.compile(toRe2Syntax(parse(pattern)));
}

function compiled(pattern: string): CompiledPattern {
  const result = compilePattern(pattern);
  if (!result.ok) throw new Error(`${pattern}: ${result.message}`);
  return result;
}

function runnerOf(result: CompiledPattern): string {
  return result.runner.kind === 'regexp' ? `regexp/${result.runner.flags}` : result.runner.kind;
}

const EMAIL = '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+[.][A-Za-z]{2,}$';

describe('where patterns run', () => {
  it.each([
    [EMAIL, 're2', 'dfa', 'e-mail-like: . and - overlap in the domain'],
    ['(a|a)*b', 're2', 'dfa', 'exponential on a backtracker'],
    ['(a*)*b', 're2', 'dfa', 'nullable body under *'],
    ['(x+x+)+y', 're2', 'dfa', 'ambiguous concatenation under +'],
    ['\\bfoo\\b', 're2', 'dfa', 'word boundaries'],
    ['^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 're2', 'dfa', 'negated classes, Unicode \\s'],
    ['(.*\\u{1F600}){3}', 're2', 'dfa', 'astral literal'],
    ['(a|b)*a(a|b){12}', 're2', 're2js', 'the DFA doubles with each count: past its bounds'],
    ['[\\s\\S]{0,1000}x', 're2', 're2js', 'a thousand overlapping positions: past the construction work bound'],
    ['^[A-Z]{3}-[0-9]{4}$', 'native', 'regexp/', 'ASCII classes and literals only'],
    ['^\\d{3}-\\d{4}$', 'native', 'regexp/', '\\d is ASCII'],
    ['^\\s*ok$', 'native', 'regexp/', '\\s is BMP, no surrogate'],
    ['^é+$', 'native', 'regexp/', 'a BMP literal'],
    ['^.$', 'native', 'regexp/u', '. matches astral characters and lone surrogates'],
    ['^[^a]$', 'native', 'regexp/u', 'a negated class holds surrogates'],
    ['^\\S$', 'native', 'regexp/u', '\\S holds surrogates'],
    ['^\\W$', 'native', 'regexp/u', '\\W holds surrogates'],
    ['^\\D$', 'native', 'regexp/u', '\\D holds surrogates'],
    ['^\\p{Lu}$', 'native', 'regexp/u', '\\p{Lu} holds astral letters'],
    ['^\\u{1F600}$', 'native', 'regexp/u', 'an astral literal'],
    ['^\\ud800$', 'native', 'regexp/u', 'a lone surrogate literal'],
  ])('%s: %s on %s (%s)', (pattern, engine, runner) => {
    const result = compiled(pattern);
    expect(result.engine).toBe(engine);
    expect(runnerOf(result)).toBe(runner);
  });

  it('keeps the policy as it was: what re2js refuses is refused, sizes and weights are unchanged', () => {
    expect(compilePattern('^(?:[a-z]{3}){400}$')).toMatchObject({ ok: false, code: 'UNSAFE_PATTERN' });
    expect(compilePattern('(a)\\1')).toMatchObject({ ok: false, code: 'UNSAFE_PATTERN' });
    expect(compilePattern('(a|a)*b')).toMatchObject({ ok: true, engine: 're2', size: 9, weight: 9 });
    expect(compilePattern('^.{0,1000}$')).toMatchObject({ ok: true, engine: 'native', size: 2005, weight: 201 });
  });

  it('runs what passes the DFA bounds on re2js, with the same answers', () => {
    const result = compiled('(a|b)*a(a|b){12}');
    expect(runnerOf(result)).toBe('re2js');
    expect(result.matcher.test(`b${'a'.repeat(13)}`)).toBe(true);
    expect(result.matcher.test('a'.repeat(12))).toBe(false);
    expect(buildDfa(parse('(a|b)*a(a|b){12}'), { ...GENEROUS, maxStates: 2000 })).toMatchObject({
      ok: false,
      reason: 'the automaton needs more than 2000 states',
    });
  });

  it('gives DFA matchers distinct toString values (Ajv caches patterns by them)', () => {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the matcher's own toString is what is under test
    expect(String(compiled('(a|a)*b').matcher)).toBe('/(a|a)*b/u');
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the matcher's own toString is what is under test
    expect(String(compiled('(a|a)*c').matcher)).toBe('/(a|a)*c/u');
  });
});

// ------------------------------------------------------------ differential

/** Inputs: ASCII, word and non-word, line terminators, Unicode spaces, BMP letters, astral, both lone surrogates. */
const INPUT_CHARS = ['a', 'b', 'c', 'x', 'A', '1', '_', '-', '.', '@', ' ', '\n', '\r', '\u2028', '\u2029', '\u00a0',
  '\u3000', 'é', 'Ж', '\u{1F600}', '\u{10FFFF}', '\ud800', '\udbff', '\udc00', '\udfff'];
const inputs = fc.array(fc.constantFrom(...INPUT_CHARS), { maxLength: 10 }).map((chars) => chars.join(''));

const ATOMS = [
  'a', 'b', 'c', 'x', 'A', '1', '-', '_', '@', '\\.', '\\n', '\\r', '\\u2028', '\\u{1F600}', '\\u{10FFFF}', '\\ud800',
  '\\udc00', 'é', '.', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '[ab]', '[^a-c]', '[a-c@]', '[^\\s@]', '[\\s\\d]',
  '[^\\S\\n]', '[\\ud800-\\udfff]', '[^\\ud800-\\udbff]', '[\\u{1F600}-\\u{1F64F}a]', '[^\\u{1F600}]', '[]', '[^]',
  '\\p{L}', '\\P{Lu}', '\\p{Emoji}',
];
const ASSERTIONS = ['^', '$', '\\b', '\\B'];
const QUANTIFIERS = ['*', '+', '?', '{2}', '{0,2}', '{1,}', '{2,3}', '*?', '+?', '??', '{1,3}?', '{0}'];

/** Random patterns of the DFA's subset: every atom kind, assertions, groups, alternation, greedy and lazy quantifiers. */
const patterns: fc.Arbitrary<string> = fc.letrec<{ pattern: string; term: string }>((tie) => ({
  term: fc.oneof(
    { depthSize: 'small', maxDepth: 3, withCrossShrink: true },
    fc.constantFrom(...ATOMS),
    fc.constantFrom(...ASSERTIONS),
    fc.tuple(tie('pattern'), fc.constantFrom('(', '(?:')).map(([p, open]) => `${open}${p})`),
    fc.tuple(fc.oneof(fc.constantFrom(...ATOMS), tie('pattern').map((p) => `(?:${p})`)), fc.constantFrom(...QUANTIFIERS))
      .map(([a, q]) => a + q),
  ),
  pattern: fc
    .array(fc.array(tie('term'), { maxLength: 4 }).map((terms) => terms.join('')), { minLength: 1, maxLength: 3 })
    .map((alternatives) => alternatives.join('|')),
})).pattern.filter((p) => p.length <= 60 && parsePattern(p).ok);

function disagreement(pattern: string, s: string, expected: boolean, actual: boolean, reference: string): string {
  return `/${pattern}/u on ${JSON.stringify(s)}: ${reference} ${expected}, DFA ${actual}`;
}

describe('differential: the DFA against JavaScript and re2js', () => {
  it('the oracle excludes matches between the halves of a pair, as the DFA does', () => {
    expect(new RegExp('\\B', 'u').test('a\u{1F600}a')).toBe(true);
    expect(specTest('\\B', 'a\u{1F600}a')).toBe(false);
    expect(dfaOf('\\B').test('a\u{1F600}a')).toBe(false);
  });

  it.each([
    // A surrogate pair is one code point; lone surrogates are code points of their own.
    ['^.$', '\u{1F600}', true],
    ['^.$', '\ud800', true],
    ['^.$', '\udc00\ud800', false],
    ['^..$', '\ud800\udc00', false],
    ['^..$', '\udc00\ud800', true],
    ['^[^a]$', '\u{1F600}', true],
    ['^\\S$', '\u{10FFFF}', true],
    ['\\udc00', '\u{1F600}', false],
    ['\\ud800', '\u{1F600}', false],
    ['\\ud800', 'x\ud800', true],
    ['\\udc00', '\udc00\udc00', true],
    ['^[\\ud800-\\udfff]$', '\u{1F600}', false],
    ['^\\u{1F600}+$', '\u{1F600}\u{1F600}', true],
    ['^\\u{1F600}+$', '\u{1F600}\ud83d', false],
    // Line terminators: . never matches them, $ is the end of the input only.
    ['^.+$', 'a\nb', false],
    ['^.+$', 'a\u2028', false],
    ['a$', 'a\n', false],
    ['^a', '\na', false],
    ['\\s', '\u2029', true],
    // Empty input and patterns that match the empty string.
    ['', '', true],
    ['^$', '', true],
    ['\\b', '', false],
    ['\\B', '', true],
    ['x*', 'yyy', true],
    ['[]', '', false],
    ['[^]', '', false],
    // Word boundaries at both ends and around non-ASCII characters.
    ['\\bfoo\\b', 'foo', true],
    ['\\bfoo\\b', 'éfooé', true],
    ['\\bfoo\\b', 'foo_', false],
    ['\\Bfoo', 'afoo', true],
    ['a\\b$', 'a', true],
    ['^\\b', ' ', false],
    // Lazy and greedy quantifiers answer alike.
    ['^a+?b$', 'aab', true],
    ['^(?:a|ab)??c', 'abc', true],
    ['^a{2,3}?$', 'aaaa', false],
  ])('/%s/u on %j is %s', (pattern, input, expected) => {
    expect(specTest(pattern, input), 'oracle').toBe(expected);
    expect(dfaOf(pattern).test(input)).toBe(expected);
  });

  it('agrees with JavaScript on random patterns and short inputs', () => {
    let built = 0;
    fc.assert(
      fc.property(patterns, fc.array(inputs, { minLength: 1, maxLength: 12 }), (pattern, strings) => {
        const tables = tablesOf(pattern);
        if (tables === undefined) return;
        built++;
        const dfa = dfaMatcher(tables, pattern);
        for (const s of strings) {
          const expected = specTest(pattern, s);
          const actual = dfa.test(s);
          if (actual !== expected) throw new Error(disagreement(pattern, s, expected, actual, 'JavaScript'));
        }
      }),
      { numRuns: 600 },
    );
    expect(built).toBeGreaterThan(500);
  });

  it('agrees with re2js on random patterns and long repetitive inputs', () => {
    const longInputs = fc
      .tuple(fc.array(fc.constantFrom(...INPUT_CHARS), { minLength: 1, maxLength: 3 }), fc.integer({ min: 20, max: 300 }), inputs)
      .map(([chunk, times, tail]) => chunk.join('').repeat(times) + tail);
    fc.assert(
      fc.property(patterns, fc.array(longInputs, { minLength: 1, maxLength: 4 }), (pattern, strings) => {
        const tables = tablesOf(pattern);
        if (tables === undefined) return;
        const dfa = dfaMatcher(tables, pattern);
        const re2 = re2Of(pattern);
        for (const s of strings) {
          const expected = re2.test(s);
          const actual = dfa.test(s);
          if (actual !== expected) throw new Error(disagreement(pattern, s, expected, actual, 're2js'));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('the service answers through the DFA as JavaScript does, on the e-mail pattern and random strings', () => {
    const result = compiled(EMAIL);
    expect(runnerOf(result)).toBe('dfa');
    const emailish = fc
      .array(fc.constantFrom('a', 'Z', '0', '.', '-', '_', '%', '+', '@', ' ', 'é', '\u{1F600}', '\ud800', '\n'), { maxLength: 16 })
      .map((chars) => chars.join(''));
    const native = new RegExp(EMAIL, 'u');
    fc.assert(
      fc.property(emailish, (s) => {
        expect(result.matcher.test(s), JSON.stringify(s)).toBe(native.test(s));
      }),
      { numRuns: 2000 },
    );
    for (const s of ['jane.doe@example.com', 'j+x@mail.example-co.uk', 'a@b.c', 'a@b.cd ', 'a b@c.de', 'ä@b.de']) {
      expect(result.matcher.test(s), s).toBe(native.test(s));
    }
  });
});

// ------------------------------------------------------------ without u

describe('native RegExp without the u flag', () => {
  it.each([
    ['^[^a]$', '\u{1F600}', 'a negated class matches half of a pair without u'],
    ['^.$', '\u{1F600}', '. reads one code unit without u'],
    ['^\\S$', '\ud800\udc00', '\\S reads one code unit without u'],
    ['^\\p{L}$', 'p{L}', '\\p means p without u'],
    ['^\\u{1F600}$', '\u{1F600}', '\\u{..} is a quantified u without u'],
  ])('refuses %s, where the answers differ: %j (%s)', (pattern, input) => {
    expect(codeUnitSource(parse(pattern))).toBeUndefined();
    expect(new RegExp(pattern).test(input)).not.toBe(new RegExp(pattern, 'u').test(input));
  });

  it.each(['\\b', '\\B', 'a\\bb'])('refuses the assertion in %s (V8 tries \\B between the halves of a pair)', (pattern) => {
    expect(codeUnitSource(parse(pattern))).toBeUndefined();
  });

  it('writes the source from the parsed pattern: escapes and fixed syntax only', () => {
    expect(codeUnitSource(parse('^[A-Z]{3}-[0-9]{4}$'))).toBe('^[\\u0041-\\u005a]{3}[\\u002d][\\u0030-\\u0039]{4}$');
    expect(codeUnitSource(parse('(a|b\\d+?)*$'))).toBe('(?:[\\u0061]|[\\u0062][\\u0030-\\u0039]{1,}){0,}$');
    expect(codeUnitSource(parse('[\\-\\]\\\\]/'))).toBe('[\\u002d\\u005c-\\u005d][\\u002f]');
  });

  it('answers as the pattern with u does, on random patterns and inputs with surrogates and astral characters', () => {
    let rewritten = 0;
    fc.assert(
      fc.property(patterns, fc.array(inputs, { minLength: 1, maxLength: 12 }), (pattern, strings) => {
        const source = codeUnitSource(parse(pattern));
        if (source === undefined) return;
        rewritten++;
        const withoutU = new RegExp(source);
        const withU = new RegExp(pattern, 'u');
        for (const s of strings) {
          expect(withoutU.test(s), `/${pattern}/u as /${source}/ on ${JSON.stringify(s)}`).toBe(withU.test(s));
        }
      }),
      { numRuns: 1500 },
    );
    expect(rewritten).toBeGreaterThan(100);
  });
});

// ------------------------------------------------------------ linear work

describe('the DFA does linear work on 1 MB inputs', () => {
  const MB = 1 << 20;

  /** Steps of the service's DFA for `pattern` on `input`; the service must run the pattern on the DFA. */
  function steps(pattern: string, input: string): { matched: boolean; steps: number } {
    const result = compiled(pattern);
    if (result.runner.kind !== 'dfa') throw new Error(`${pattern} runs on ${runnerOf(result)}`);
    const counter = { steps: 0 };
    const matched = dfaSearch(result.runner.tables, input, counter);
    expect(matched, 'the counting search answers as the matcher').toBe(result.matcher.test(input));
    return { matched, steps: counter.steps };
  }

  it.each([
    ['(a|a)*b', 'a'.repeat(MB), false],
    ['(a*)*b', 'a'.repeat(MB), false],
    ['(x+x+)+y', 'x'.repeat(MB), false],
    ['(x+x+)+y', `${'x'.repeat(MB)}y`, true],
    ['^(a|a)*$', `${'a'.repeat(MB)}!`, false],
    ['(.*a){12}', `${'a'.repeat(11)}${'b'.repeat(MB)}`, false],
    ['^(\\w+\\s?)*$', `${'ab '.repeat(MB / 3)}!`, false],
    ['\\bfoo\\b', 'foo_'.repeat(MB / 4), false],
    [EMAIL, `${'a'.repeat(MB)}@`, false],
    [EMAIL, `a@${'b.'.repeat(MB / 2)}cd`, true],
  ])('%s on %#: one step per character', (pattern, input, expected) => {
    const run = steps(pattern, input);
    expect(run.matched).toBe(expected);
    // One transition per ASCII character, one for the end of the input.
    expect(run.steps).toBeLessThanOrEqual(input.length + 1);
    expect(run.steps).toBeGreaterThan(0);
  });

  it.each([
    ['(.*\\u{1F600}){3}x', '\u{1F600}'.repeat(MB / 2)],
    ['^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', `${'é'.repeat(MB)}@`],
    ['(\\p{L}|\\p{Lu})*!', 'Жé\ud800\u{1F600}'.repeat(MB / 5)],
    ['(\\udc00|\\ud800)+x', '\ud800\udc00\udc00'.repeat(MB / 3)],
  ])('%s on non-ASCII input %#: a transition and a bounded class lookup per code point', (pattern, input) => {
    const tables = compiled(pattern).runner;
    if (tables.kind !== 'dfa') throw new Error(`${pattern} is not on the DFA`);
    // A class lookup above ASCII is a binary search over the pattern's ranges.
    const probes = Math.ceil(Math.log2(tables.tables.rangeStarts.length)) + 1;
    const run = steps(pattern, input);
    expect(run.matched).toBe(false);
    expect(run.steps).toBeLessThanOrEqual(probes * input.length + 1);
    // Twice the input, at most twice the work.
    expect(steps(pattern, input + input).steps).toBeLessThanOrEqual(2 * run.steps);
  });

  it('stops at the first match and at the first character after which no match is possible', () => {
    expect(steps('(a|a)*b', `b${'a'.repeat(MB)}`).steps).toBe(1);
    expect(steps(EMAIL, `!${'a'.repeat(MB)}`).steps).toBe(1);
  });
});
