/**
 * The regex policy (docs/rule-language.md): which engine each pattern gets, what is
 * refused and why, that the RE2 rewrite means what JavaScript means, that
 * the linearity proof is sound (checked on a step-counting backtracker), and
 * that classic ReDoS patterns finish on 50,000-character inputs.
 */
import fc from 'fast-check';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import type { AST } from '@eslint-community/regexpp';
import { ajvRegExpEngine, compilePattern, proveLinear } from '../../compiler/regex/index.ts';
import { MAX_CONTEXT_PATTERN_WEIGHT, MAX_FIELD_PATTERN_WEIGHT, MAX_PATTERN_SIZE, programSize } from '../../compiler/regex/pattern-size.ts';
import { checkRule, compileRuleset } from '../../compiler/index.ts';
import { BoundedMemo } from '../../compiler/expression/bounded-memo.ts';
import { expressionMemoWeight } from '../../compiler/expression/compile-expression.ts';
import { parsePattern } from '../../compiler/regex/parse-pattern.ts';
import { toRe2Syntax } from '../../compiler/regex/re2-syntax.ts';
import { charSetOf, DIGIT, DOT, SPACE, WORD } from '../../compiler/regex/character-sets.ts';
import type { CodePointSet } from '../../compiler/regex/code-point-set.ts';
import { specTest } from './regex-oracle.ts';

function parse(pattern: string): AST.Pattern {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) throw new Error(`test pattern does not parse: ${pattern}`);
  return parsed.ast;
}

/** The pattern forced onto RE2, whatever the checker says. */
function viaRe2(pattern: string): RE2JS {
  return RE2JS.compile(toRe2Syntax(parse(pattern)));
}

describe('engine choice', () => {
  const table: Array<[pattern: string, engine: 'native' | 're2', note: string]> = [
    // Classic catastrophic patterns: never native.
    ['^(a|a)*$', 're2', 'exponential; safe-regex2 passes it'],
    ['(a+)+$', 're2', 'nested quantifier'],
    ['^(a+)+$', 're2', 'nested quantifier, anchored: star normal form violated'],
    ['(a*)*b', 're2', 'nullable body under *'],
    ['(x+x+)+y', 're2', 'ambiguous concatenation under +'],
    ['^(\\d+)*$', 're2', 'loop edge duplicated'],
    ['(.*a){12}', 're2', '. overlaps a'],
    ['^(\\w+\\s?)*$', 're2', 'classic word list'],
    ['^(a?){25}a{25}$', 're2', 'optional then required overlap'],
    ['^(?:(?:a)?)?b', 're2', 'two ways to match empty'],
    ['^(a|b?)+$', 're2', 'nullable alternative under +'],
    ['(a|ab)(c|bcd)(d*)', 're2', 'nondeterministic but not catastrophic'],
    ['\\bfoo\\b', 're2', 'word boundary'],
    ['a^b', 're2', 'assertion in the middle'],
    ['[a-z]+\\.pdf$', 're2', 'unanchored and unbounded: quadratic search'],
    ['^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 're2', 'email: [^\\s@] overlaps \\.'],
    // Everyday patterns: proven linear, native.
    ['^[a-z]+@[a-z]+\\.[a-z]{2,}$', 'native', 'simple email'],
    ['^\\d{3}-\\d{4}$', 'native', 'phone'],
    ['^[A-Z]{2}\\d{6}$', 'native', 'passport-like'],
    ['^[A-Z]{2}\\d{2}[A-Z0-9]{11,30}$', 'native', 'IBAN-like'],
    ['^\\d{4}-\\d{2}-\\d{2}$', 'native', 'ISO date'],
    ['^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', 'native', 'ISO date with ranges'],
    ['^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2})$', 'native', 'ISO date-time'],
    ['^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', 'native', 'UUID'],
    ['^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}$', 're2', 'email: - and . overlap in the domain'],
    ['^[\\w.+-]+@\\w+\\.\\w+$', 'native', 'email, deterministic'],
    ['^\\p{Lu}\\p{Ll}+$', 'native', 'Unicode properties, exact sets'],
    ['^(?:a|b)*c$', 'native', 'deterministic loop'],
    ['\\d{3}-\\d{4}', 'native', 'unanchored but bounded'],
    ['^a$|^b$', 'native', 'anchored alternatives'],
    ['ab|cd', 'native', 'unanchored, bounded'],
    ['', 'native', 'empty pattern'],
    ['^(?:[a-z]{3}){100}$', 'native', '300 positions'],
    ['^[a-z]{600}[0-9]{600}$', 're2', 'over the position budget'],
  ];

  it.each(table)('%s -> %s (%s)', (pattern, engine) => {
    const result = compilePattern(pattern);
    expect(result).toMatchObject({ ok: true, engine });
  });

  it.each([
    ['^\\d{3}-\\d{4}$', '555-1234', true],
    ['^\\d{3}-\\d{4}$', '5551234', false],
    ['^\\d{3}-\\d{4}$', '555-1234\n', false],
    ['\\d{3}-\\d{4}', 'call 555-1234 now', true],
    ['^[a-z]+@[a-z]+\\.[a-z]{2,}$', 'ann@example.org', true],
    ['^[a-z]+@[a-z]+\\.[a-z]{2,}$', 'ann@example.o', false],
    ['\\bfoo\\b', 'a foo b', true],
    ['\\bfoo\\b', 'afoob', false],
    ['^(a|a)*$', 'aaaa', true],
    ['^(a|a)*$', 'aaab', false],
    ['^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'a@b.c', true],
    ['^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'a@b c.d', false],
    ['^.$', '\u{1F600}', true],
    ['^.$', '\u2028', false],
    ['^\\p{Lu}\\p{Ll}+$', 'Émile', true],
    ['^\\p{Lu}\\p{Ll}+$', 'émile', false],
  ])('%s on %j is %s', (pattern, input, expected) => {
    const result = compilePattern(pattern);
    if (!result.ok) throw new Error(result.message);
    expect(result.matcher.test(input)).toBe(expected);
    expect(new RegExp(pattern, 'u').test(input)).toBe(expected);
  });
});

describe('refusals', () => {
  it.each([
    ['(a)\\1', 'UNSAFE_PATTERN', 'backreferences and lookaround are not supported', 3],
    ['(?<x>a)\\k<x>', 'UNSAFE_PATTERN', 'backreferences and lookaround are not supported', 7],
    ['a(?=b)', 'UNSAFE_PATTERN', 'backreferences and lookaround are not supported', 1],
    ['a(?!b)', 'UNSAFE_PATTERN', 'backreferences and lookaround are not supported', 1],
    ['(?<=a)b', 'UNSAFE_PATTERN', 'backreferences and lookaround are not supported', 0],
    ['(?<!a)b', 'UNSAFE_PATTERN', 'backreferences and lookaround are not supported', 0],
    ['a(b', 'INVALID_PATTERN', 'Unterminated group', 3],
    ['a{2,1}', 'INVALID_PATTERN', 'numbers out of order', 6],
    ['[b-a]', 'INVALID_PATTERN', 'Range out of order', 4],
    ['\\p{NoSuchProperty}', 'INVALID_PATTERN', 'Invalid property name', 17],
    ['a**', 'INVALID_PATTERN', 'Nothing to repeat', 3],
    ['\\-', 'INVALID_PATTERN', 'Invalid escape', 1],
    ['(?i:a)', 'INVALID_PATTERN', 'Invalid group', 1],
    ['a{2000}', 'UNSAFE_PATTERN', 'too large for the linear-time engine', undefined],
    ['^(?:[a-z]{3}){400}$', 'UNSAFE_PATTERN', 'invalid repeat count', undefined],
  ])('%s is %s', (pattern, code, message, offset) => {
    const result = compilePattern(pattern);
    expect(result).toMatchObject({ ok: false, code });
    if (result.ok) return;
    expect(result.message).toContain(message);
    expect(result.offset).toBe(offset);
  });

  it('refuses patterns over the length limit, 512 by default', () => {
    expect(compilePattern('a'.repeat(512)).ok).toBe(true);
    expect(compilePattern('a'.repeat(513))).toEqual({
      ok: false,
      code: 'TOO_LONG',
      message: 'the pattern is 513 characters long; the limit is 512',
    });
    expect(compilePattern('abcd', { maxPatternLength: 3 })).toMatchObject({ ok: false, code: 'TOO_LONG' });
  });
});

describe('ajvRegExpEngine', () => {
  it('returns matchers for admitted patterns and throws a clear error for refused ones', () => {
    expect(ajvRegExpEngine('^\\d+$', 'u').test('42')).toBe(true);
    expect(ajvRegExpEngine('(a|a)*b', 'u').test('aab')).toBe(true);
    expect(() => ajvRegExpEngine('(a)\\1', 'u')).toThrow(
      'UNSAFE_PATTERN: pattern "(a)\\\\1": backreferences and lookaround are not supported (\\1 at offset 3)',
    );
    expect(() => ajvRegExpEngine('a', 'gu')).toThrow('regular expression flags "gu" are not supported');
  });

  it('gives each pattern its own toString, which ajv uses as its pattern cache key', () => {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the engine's own toString is what is under test
    const keys = ['(a|a)*b', '(a|a)*c', '^a$', '^b$'].map((p) => String(ajvRegExpEngine(p, 'u')));
    expect(new Set(keys).size).toBe(4);
  });

  it('names an importable module for standalone code', () => {
    expect(ajvRegExpEngine.code).toMatch(/^require\(".*compile-pattern\.ts"\)\.patternEngine$/);
  });
});

describe('character sets equal the native ones', () => {
  it.each([
    ['.', DOT],
    ['\\s', SPACE],
    ['\\d', DIGIT],
    ['\\w', WORD],
  ] as Array<[string, CodePointSet]>)('%s over the BMP and some astral code points', (source, set) => {
    const native = new RegExp(`^${source}$`, 'u');
    const mismatches: number[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (native.test(String.fromCharCode(cp)) !== set.has(cp)) mismatches.push(cp);
    }
    for (const cp of [0x10000, 0x1f600, 0x10ffff]) {
      if (native.test(String.fromCodePoint(cp)) !== set.has(cp)) mismatches.push(cp);
    }
    expect(mismatches).toEqual([]);
  });

  it.each(['\\p{L}', '\\P{Lu}', '\\p{Script=Greek}', '[^\\p{N}a-z]', '\\p{Emoji}'])(
    '%s, scanned from V8, matches what V8 matches',
    (source) => {
      const node = parse(source).alternatives[0].elements[0] as Parameters<typeof charSetOf>[0];
      const set = charSetOf(node);
      const native = new RegExp(`^${source}$`, 'u');
      for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x3000 ? 1 : 97) {
        const s = String.fromCodePoint(cp);
        if (native.test(s) !== set.has(cp)) throw new Error(`U+${cp.toString(16)} differs`);
      }
    },
  );
});

// ------------------------------------------------------------ differential

/** Alphabet of the random inputs: ASCII, line terminators, Unicode spaces, astral, lone surrogates. */
const INPUT_CHARS = ['a', 'b', 'c', 'A', 'Z', '1', '_', '-', '.', ' ', '\n', '\r', '\t', '\u2028', '\u00a0',
  '\u3000', '\ufeff', 'é', 'Ж', '\u{1F600}', '\ud800', '\udc00'];

const inputs = fc.array(fc.constantFrom(...INPUT_CHARS), { maxLength: 8 }).map((chars) => chars.join(''));

const atoms = fc.constantFrom(
  'a', 'b', 'c', 'A', '1', '-', '\\.', '\\n', '\\u2028', '\\u{1F600}', '\\ud800', 'é', '.', '\\d', '\\D', '\\w',
  '\\W', '\\s', '\\S', '[ab]', '[^a-c]', '[\\s\\d]', '[^\\S\\n]', '[a\\-z]', '[]', '[^]', '\\p{L}', '\\P{Lu}',
  '[\\p{N}x]', '\\p{Script=Cyrillic}', '^', '$', '\\b', '\\B', '\\0', '\\cJ', '\\x41', '\\/',
);
const quantifiers = fc.constantFrom('*', '+', '?', '{2}', '{0,2}', '{1,}', '{2,3}', '*?', '+?', '??', '{0}');

/** Random patterns up to three groups deep: short enough to run natively on 8 characters. */
const patterns: fc.Arbitrary<string> = fc.letrec<{ pattern: string; term: string }>((tie) => ({
  term: fc.oneof(
    { depthSize: 'small', maxDepth: 3, withCrossShrink: true },
    atoms,
    fc.tuple(tie('pattern'), fc.constantFrom('(', '(?:', '(?<g>')).map(([p, open]) => `${open}${p})`),
    fc.tuple(
      fc.oneof(atoms, tie('pattern').map((p) => `(?:${p})`)),
      quantifiers,
    ).filter(([a]) => !['^', '$', '\\b', '\\B'].includes(a)).map(([a, q]) => a + q),
  ),
  pattern: fc
    .array(fc.array(tie('term'), { maxLength: 4 }).map((terms) => terms.join('')), { minLength: 1, maxLength: 3 })
    .map((alternatives) => alternatives.join('|')),
})).pattern.filter((p) => p.length <= 60 && parsePattern(p).ok && !p.includes('(?<g>', p.indexOf('(?<g>') + 1));

describe('differential: RE2 rewrite against native RegExp', () => {
  it('the oracle is V8 except where V8 matches inside a surrogate pair', () => {
    expect(new RegExp('\\B', 'u').test('a\u{1F600}a')).toBe(true);
    expect(specTest('\\B', 'a\u{1F600}a')).toBe(false);
    expect(viaRe2('\\B').test('a\u{1F600}a')).toBe(false);
    for (const [pattern, s] of [['\\B', ''], ['\\B', ' '], ['\\b', 'a'], ['a$', 'ba'], ['^\\u{1F600}', '\u{1F600}x'], ['.', '\ud800']]) {
      expect(specTest(pattern, s), `/${pattern}/u on ${JSON.stringify(s)}`).toBe(new RegExp(pattern, 'u').test(s));
    }
  });

  it('agrees with JavaScript on random patterns and inputs', () => {
    fc.assert(
      fc.property(patterns, fc.array(inputs, { minLength: 1, maxLength: 12 }), (pattern, strings) => {
        const re2 = viaRe2(pattern);
        for (const s of strings) {
          const expected = specTest(pattern, s);
          if (re2.test(s) !== expected) {
            throw new Error(`/${pattern}/u on ${JSON.stringify(s)}: JavaScript ${expected}, re2 ${re2.test(s)}`);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('gives the engine it chose the same answers as JavaScript', () => {
    fc.assert(
      fc.property(patterns, fc.array(inputs, { minLength: 1, maxLength: 12 }), (pattern, strings) => {
        const result = compilePattern(pattern);
        if (!result.ok) return;
        const native = new RegExp(pattern, 'u');
        for (const s of strings) {
          const expected = result.engine === 'native' ? native.test(s) : specTest(pattern, s);
          expect(result.matcher.test(s), `/${pattern}/u on ${JSON.stringify(s)}`).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['^(a|a)*$', ['', 'a', 'aaa', 'aab']],
    ['(a+)+$', ['a', 'ab', 'ba', '!']],
    ['(a*)*b', ['b', 'aab', 'aaa']],
    ['(x+x+)+y', ['xxy', 'xy', 'xxxxy', 'xxxx']],
    ['(.*a){3}', ['aaa', 'a\na\na', 'aa', 'bababa']],
    ['\\bfoo\\b', ['foo', 'foo_', '-foo-', 'éfooé']],
    ['a$', ['a', 'a\n', 'ba']],
    ['^\\s+$', [' \u00a0\u3000\ufeff', '\u200b', '\u2028\t']],
    ['(a|ab)(c|bcd)(d*)', ['abcd', 'acd', 'abd']],
  ])('classic pattern %s agrees on RE2', (pattern, strings) => {
    const native = new RegExp(pattern, 'u');
    const re2 = viaRe2(pattern);
    for (const s of strings) expect(re2.test(s), JSON.stringify(s)).toBe(native.test(s));
  });
});

// ------------------------------------------------------------ soundness

class StepLimit extends Error {}

/**
 * A plain backtracking matcher with V8's search order (greedy or lazy loops,
 * alternatives left to right, empty iterations stopped, every start tried)
 * that counts its steps. Work it does is work irregexp's backtracker may do.
 */
function backtrackingSteps(pattern: AST.Pattern, input: string, limit: number): number {
  let steps = 0;
  const sets = new Map<AST.Node, CodePointSet>();
  type Next = (pos: number) => boolean;
  const tick = (): void => {
    if (++steps > limit) throw new StepLimit();
  };
  const isWord = (pos: number): boolean => pos >= 0 && pos < input.length && /\w/.test(input[pos]);
  const seq = (elements: readonly AST.Element[], i: number, pos: number, k: Next): boolean =>
    i === elements.length ? k(pos) : node(elements[i], pos, (p) => seq(elements, i + 1, p, k));
  const alts = (alternatives: readonly AST.Alternative[], pos: number, k: Next): boolean =>
    alternatives.some((alternative) => (tick(), seq(alternative.elements, 0, pos, k)));
  const loop = (q: AST.Quantifier, count: number, pos: number, k: Next): boolean => {
    tick();
    const again = (): boolean =>
      node(q.element, pos, (p) => (p === pos && count >= q.min ? false : loop(q, count + 1, p, k)));
    if (count < q.min) return again();
    if (count >= q.max) return k(pos);
    return q.greedy ? again() || k(pos) : k(pos) || again();
  };
  function node(n: AST.Element, pos: number, k: Next): boolean {
    tick();
    switch (n.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass': {
        let set = sets.get(n);
        if (set === undefined) sets.set(n, (set = charSetOf(n)));
        const cp = input.codePointAt(pos);
        return cp !== undefined && set.has(cp) && k(pos + (cp > 0xffff ? 2 : 1));
      }
      case 'Group':
      case 'CapturingGroup':
        return alts(n.alternatives, pos, k);
      case 'Quantifier':
        return loop(n, 0, pos, k);
      case 'Assertion':
        if (n.kind === 'start') return pos === 0 && k(pos);
        if (n.kind === 'end') return pos === input.length && k(pos);
        if (n.kind === 'word') return (isWord(pos - 1) !== isWord(pos)) !== n.negate && k(pos);
        throw new Error('lookaround');
      default:
        throw new Error(n.type);
    }
  }
  for (let start = 0; start <= input.length; start++) {
    if (alts(pattern.alternatives, start, () => true)) break;
  }
  return steps;
}

const soundnessAtoms = fc.constantFrom('a', 'b', '[ab]', '[^a]', '.', '\\w', '-');
const soundnessPatterns: fc.Arbitrary<string> = fc.letrec<{ pattern: string; term: string }>((tie) => ({
  term: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    soundnessAtoms,
    tie('pattern').map((p) => `(?:${p})`),
    fc.tuple(fc.oneof(soundnessAtoms, tie('pattern').map((p) => `(?:${p})`)), fc.constantFrom('*', '+', '?', '{2}', '{1,3}', '{2,}'))
      .map(([a, q]) => a + q),
  ),
  pattern: fc
    .array(fc.array(tie('term'), { minLength: 1, maxLength: 4 }).map((t) => t.join('')), { minLength: 1, maxLength: 3 })
    .map((alternatives) => alternatives.join('|')),
})).pattern.chain((body) =>
  fc.constantFrom(`^(?:${body})$`, `^(?:${body})`, `(?:${body})$`, body).filter((p) => parsePattern(p).ok),
);

describe('soundness of the linearity proof', () => {
  /** Steps on chunk^k + tail, for k and 2k: linear work at most doubles (plus a constant). */
  function growth(pattern: string, chunk: string, tail: string, k: number): { small: number; large: number } {
    const ast = parse(pattern);
    const limit = 2_000_000;
    try {
      const small = backtrackingSteps(ast, chunk.repeat(k) + tail, limit);
      const large = backtrackingSteps(ast, chunk.repeat(2 * k) + tail, limit);
      return { small, large };
    } catch (error) {
      if (error instanceof StepLimit) return { small: 1, large: Infinity };
      throw error;
    }
  }

  it('the harness itself sees super-linear patterns', () => {
    for (const pattern of ['^(a+)+$', '^(a|a)*$', '^(a*)*$', '[a-z]+\\.pdf$', '^(?:a|aa)*$']) {
      const { small, large } = growth(pattern, 'a', '!', 40);
      expect(large, pattern).toBeGreaterThan(2.5 * small + 200);
      expect(proveLinear(parse(pattern)).linear, pattern).toBe(false);
    }
  });

  it.each([
    '^(a+)*$', '^(?:a*)+$', '^(?:a+b?)*$', '^(?:a?b)*a*$', '^(?:(?:a|b)+-)*$', '^(?:a{1,3})*$', '^(?:a{2})*a$',
    '^(?:ab|a)*$', '^(?:a|ba)*b$', '^(?:a*b)*$', '(?:a{1,2}){3}$', '^(?:a|b)*a(?:a|b){5}$', '^(?:a(?:b)?)+$',
    '^(?:(?:a|-)b*)*$', '^(?:a?)*$', '^(?:a|b?)+$', '^(?:[ab]a|b)*$',
  ])('%s is refused or does linear work', (pattern) => {
    if (!proveLinear(parse(pattern)).linear) return;
    for (const chunk of ['a', 'b', 'ab', 'aab', 'ba', 'a-', 'a-b']) {
      for (const tail of ['', '!', 'a', 'b', '-']) {
        const { small, large } = growth(pattern, chunk, tail, 40);
        expect(large, `(${chunk})^k${tail}: ${small} then ${large} steps`).toBeLessThanOrEqual(2.2 * small + 500);
      }
    }
  });

  it('admitted patterns do linear work on repetitive adversarial inputs', () => {
    let admitted = 0;
    fc.assert(
      fc.property(
        soundnessPatterns,
        fc.oneof(
          fc.constantFrom('a', 'ab', 'b-'),
          fc.array(fc.constantFrom('a', 'b', '-', 'c'), { minLength: 1, maxLength: 3 }).map((c) => c.join('')),
        ),
        fc.constantFrom('', '!', 'a', 'b', '-', 'ab!'),
        (pattern, chunk, tail) => {
          if (!proveLinear(parse(pattern)).linear) return;
          admitted++;
          const { small, large } = growth(pattern, chunk, tail, 40);
          expect(large, `${pattern} on (${chunk})^k${tail}: ${small} then ${large} steps`).toBeLessThanOrEqual(
            2.2 * small + 500,
          );
        },
      ),
      { numRuns: 1500 },
    );
    // The generator must exercise the checker, not just be refused by it.
    expect(admitted).toBeGreaterThan(50);
  });
});

// ------------------------------------------------------------ adversarial

describe('classic ReDoS patterns on RE2 finish on 50,000 characters', () => {
  const n = 50_000;
  it.each([
    ['(a+)+$', 'a'.repeat(n) + '!', false],
    ['^(a|a)*$', 'a'.repeat(n) + '!', false],
    ['(a*)*b', 'a'.repeat(n), false],
    ['(x+x+)+y', 'x'.repeat(n), false],
    ['^(\\d+)*$', '1'.repeat(n) + 'a', false],
    ['(.*a){12}', 'a'.repeat(11) + 'b'.repeat(n), false],
    ['^(\\w+\\s?)*$', 'ab '.repeat(n / 3) + '!', false],
    ['^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', 'a@' + '.'.repeat(n) + ' ', false],
    ['^(a?){25}a{25}$', 'a'.repeat(n), false],
    ['[a-z]+\\.pdf$', 'a'.repeat(n) + '.pdx', false],
    ['^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$', 'a'.repeat(n) + '!', false],
  ])('%s', (pattern, input, expected) => {
    const result = compilePattern(pattern);
    expect(result).toMatchObject({ ok: true, engine: 're2' });
    if (result.ok) expect(result.matcher.test(input)).toBe(expected);
  }, 60_000);
});

describe('program size (memory of a compiled pattern)', () => {
  it('counts what repetition counts expand to, classes by their ranges', () => {
    expect(programSize(parse('^\\d{3}$'))).toBe(11);
    expect(programSize(parse('abc'))).toBe(5);
    expect(programSize(parse('(\\w+\\s?){1000}$'))).toBeGreaterThan(MAX_PATTERN_SIZE);
    // It follows the program RE2 builds: ten times the repetitions, about ten times the instructions.
    const small = viaRe2('(a|b)[c-z]{100}x');
    const large = viaRe2('(a|b)[c-z]{1000}x');
    const instructions = (re: RE2JS): number => (re as unknown as { re2Input: { prog: { inst: unknown[] } } }).re2Input.prog.inst.length;
    const ratio = instructions(large) / instructions(small);
    expect(programSize(parse('(a|b)[c-z]{1000}x')) / programSize(parse('(a|b)[c-z]{100}x'))).toBeCloseTo(ratio, 0);
  });

  it('refuses a pattern past MAX_PATTERN_SIZE with UNSAFE_PATTERN, on either engine, and reports the size of the others', () => {
    for (const pattern of ['^\\d{2500}$', '(\\w+\\s?){1000}$', '[\\s\\S]{0,1000}[\\s\\S]{0,1000}x']) {
      const result = compilePattern(pattern);
      expect(result).toMatchObject({ ok: false, code: 'UNSAFE_PATTERN', message: expect.stringContaining(`the limit is ${MAX_PATTERN_SIZE}`) });
    }
    // Weights: a native pattern's program is compiled lazily and far smaller; it weighs a tenth.
    expect(compilePattern('^.{0,1000}$')).toMatchObject({ ok: true, engine: 'native', size: 2005, weight: 201 });
    expect(compilePattern('(a|a)*b')).toMatchObject({ ok: true, engine: 're2', size: 9, weight: 9 });
  });
});

describe('the regex programs of a ruleset together', () => {
  const bigPatterns = (tag: string, count: number): string =>
    // On the linear-time engine ((a|a)* is not provably linear): about 2,000 steps each, weighed in full.
    Array.from({ length: count }, (_, k) => `matches(s, "^(a|a)*.{0,1000}${tag}${k}$")`).join(' || ');

  it('stay within MAX_CONTEXT_PATTERN_WEIGHT: the rule that would pass it is left out with LIMIT_EXCEEDED', () => {
    // About 80,000 a rule (within a field's bound): the seventh passes 500,000, and the eighth is not even planned.
    const rules = Array.from({ length: 8 }, (_, i) => ({ code: `P${i}`, name: `p${i}`, expression: bigPatterns(`r${i}_`, 40) }));
    const compiled = compileRuleset(rules);
    expect(compiled.ruleCount).toBe(6);
    expect(compiled.errors).toEqual([expect.objectContaining({ ruleCode: 'P6', field: 'expression', code: 'LIMIT_EXCEEDED' })]);
    expect(compiled.errors[0].message).toContain(`the limit is ${MAX_CONTEXT_PATTERN_WEIGHT}`);
  });

  it('count a pattern shared by rules, and schema patterns, once', () => {
    const shared = bigPatterns('shared', 40);
    const rules = [
      ...Array.from({ length: 10 }, (_, i) => ({ code: `S${i}`, name: `s${i}`, expression: shared })),
      { code: 'SCHEMA', name: 'schema', fieldPath: 's', schema: { type: 'string', pattern: '^(a|a)*.{0,1000}shared0$' } },
    ];
    expect(compileRuleset(rules).errors).toEqual([]);
  });
});

describe('BoundedMemo (the expression and template memos)', () => {
  it('keeps at most its count and its weight, dropping the oldest, and never an entry heavier than the whole', () => {
    const memo = new BoundedMemo<string>(3, 100);
    memo.set('a', 'A', 40);
    memo.set('b', 'B', 40);
    memo.set('c', 'C', 10);
    expect([memo.get('a'), memo.get('b'), memo.get('c')]).toEqual(['A', 'B', 'C']);
    memo.set('d', 'D', 30); // 120 > 100: 'a' goes
    expect(memo.get('a')).toBeUndefined();
    expect(memo.weight).toBe(80);
    memo.set('e', 'E', 0); // a fourth entry: 'b' goes
    expect(memo.get('b')).toBeUndefined();
    memo.set('huge', 'H', 101);
    expect(memo.get('huge')).toBeUndefined();
    expect(memo.get('c')).toBe('C');
    memo.set('c', 'C2', 20);
    expect(memo.get('c')).toBe('C2');
    expect(memo.weight).toBe(50);
  });

  it('bounds what checking rules of large patterns keeps: the program size held stays within the context limit', () => {
    // 30 distinct rules of 40 native patterns of about 2,000 steps (weighing 201 each): 241,000 if all were kept.
    for (let i = 0; i < 30; i++) {
      const expression = Array.from({ length: 40 }, (_, k) => `matches(s, "^.{0,1000}memo${i}_${k}$")`).join(' || ');
      expect(checkRule({ code: `M${i}`, name: 'm', expression })).toEqual([]);
    }
    expect(expressionMemoWeight()).toBeLessThanOrEqual(2 * MAX_FIELD_PATTERN_WEIGHT);
  });
});

describe('ordinary large contexts stay within the ruleset bound', () => {
  it('5000 rules, each with a distinct ordinary pattern on either engine, compile', () => {
    const rules = Array.from({ length: 5000 }, (_, i) => ({
      code: `R${i}`, name: `r${i}`, fieldPath: 's',
      expression: i % 2 === 0
        ? `matches($value, "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}${i}$")`
        : `matches($value, "^[^@\\\\s]+@[^@\\\\s]+\\\\.${i}[^@\\\\s]+$")`,
    }));
    expect(compilePattern('^[^@\\s]+@[^@\\s]+\\.1[^@\\s]+$')).toMatchObject({ ok: true, engine: 're2' });
    const compiled = compileRuleset(rules);
    expect(compiled.errors).toEqual([]);
    expect(compiled.ruleCount).toBe(5000);
  });
});
