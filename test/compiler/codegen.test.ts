/**
 * The codegen library's guarantees: interpolated values become literals
 * that evaluate back to themselves, never code; names come only from a
 * Scope; comments cannot end early.
 */
import { describe, expect, it } from 'vitest';
import { _, Code, CodeWriter, Scope, comment, commentOf, join, lit } from '../../compiler/codegen/index.ts';

const HOSTILE_STRINGS = [
  '', 'plain', '"; process.exit(); "', "'", '`${process}`', '\\', '\\"', '\n', '\r\n', '\u2028', '\u2029',
  '*/ x /*', '</script>', '\uD800', '\uDFFF\uD800', '\0', '${', '}); evil(); ({', 'a'.repeat(10_000),
];

describe('the _ template', () => {
  it.each(HOSTILE_STRINGS)('interpolates %j as a literal that evaluates to itself', (s) => {
    const code = _`return ${s};`;
    expect(new Function(code.toString())()).toBe(s);
    expect(code.toString()).not.toMatch(/[\n\r\u2028\u2029]/);
  });

  it.each([0, -0, 1.5, -1.5, 1e21, 5e-324, Number.MAX_SAFE_INTEGER, -Number.MAX_VALUE])('interpolates the number %d exactly', (n) => {
    const value = new Function(_`return ${n};`.toString())();
    expect(Object.is(value, n)).toBe(true);
  });

  it('keeps a negative number from merging with a minus before it', () => {
    expect(new Function(_`return 1 - ${-1};`.toString())()).toBe(2);
  });

  it('interpolates booleans, null and undefined', () => {
    expect(_`[${true}, ${false}, ${null}, ${undefined}]`.toString()).toBe('[true, false, null, undefined]');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, {}, [], () => 1, Symbol('s'), 1n])('refuses %s', (value) => {
    expect(() => _`${value}`).toThrow(TypeError);
  });

  it('splices Code and Names as code', () => {
    const scope = new Scope();
    const x = scope.name('v');
    expect(_`const ${x} = ${_`1 + 2`};`.toString()).toBe('const v0 = 1 + 2;');
  });

  it('cannot be called with a hand-made strings array', () => {
    const fake = Object.assign(['evil()'], { raw: ['evil()'] }) as unknown as TemplateStringsArray;
    expect(() => _(fake)).toThrow(TypeError);
  });

  it('Code cannot be constructed outside codegen', () => {
    expect(() => new Code(Symbol('codegen'), 'evil()')).toThrow(TypeError);
  });

  it('join and lit build code from code and literals only', () => {
    expect(join([_`a`, lit('b'), lit(1)]).toString()).toBe('a, "b", 1');
    expect(join([_`a`, _`b`], _` || `).toString()).toBe('a || b');
  });
});

describe('Scope', () => {
  it('hands out prefix+counter names and skips reserved ones', () => {
    const scope = new Scope();
    scope.reserve('t1');
    expect([scope.name('t'), scope.name('t'), scope.name('p')].map(String)).toEqual(['t0', 't2', 'p0']);
  });

  it('refuses names that are not plain identifiers, and reserving twice', () => {
    const scope = new Scope();
    expect(() => scope.reserve('a b')).toThrow(TypeError);
    expect(() => scope.reserve('ñ')).toThrow(TypeError);
    expect(() => scope.name('1x')).toThrow(TypeError);
    expect(() => scope.name('a-')).toThrow(TypeError);
    scope.reserve('get');
    expect(() => scope.reserve('get')).toThrow(TypeError);
  });
});

describe('comments', () => {
  it.each(HOSTILE_STRINGS)('comment(%j) stays one line comment', (s) => {
    const source = `${comment(s).toString()}\nreturn 1;`;
    expect(new Function(source)()).toBe(1);
    expect(commentOf`rule ${s}`.toString()).not.toMatch(/[\n\r\u2028\u2029]/);
  });
});

describe('CodeWriter', () => {
  it('indents blocks two spaces per level and embeds other writers', () => {
    const inner = new CodeWriter();
    inner.line(_`b();`);
    const w = new CodeWriter();
    w.block(_`if (x)`, () => {
      w.line(_`a();`);
      w.embed(inner);
      w.open(_`if (y)`).line(_`c();`).reopen(_`else`).line(_`d();`).close();
    });
    w.braces(() => w.line(_`e();`));
    expect(w.toCode().toString()).toBe([
      'if (x) {',
      '  a();',
      '  b();',
      '  if (y) {',
      '    c();',
      '  } else {',
      '    d();',
      '  }',
      '}',
      '{',
      '  e();',
      '}',
    ].join('\n'));
  });
});
