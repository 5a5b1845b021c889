/**
 * Fast paths of the generated validators against the general path they
 * stand for. Each fast path must give exactly what the general path gives,
 * for JSON values and for hostile ones (`__proto__` keys, getters,
 * inherited fields, non-plain objects, strings that look like numbers).
 *
 * Message placeholders rendered while generating (compiler/ruleset-source.ts,
 * `renderedNow`): a literal, `$expected` of a rule whose expected value is
 * constant, `$value` where it is missing, `$item`/`$index` outside forEach;
 * and `$index` of a forEach rule joined without text(). The general path
 * is the same value read from the payload at validation time and rendered
 * by the runtime's text().
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleset, type RuleDefinition } from '../../compiler/index.ts';

function compile(rules: RuleDefinition[]): ReturnType<typeof compileRuleset> {
  const compiled = compileRuleset(rules);
  expect(compiled.errors).toEqual([]);
  return compiled;
}

function messages(rules: RuleDefinition[], payload: unknown): string[] {
  return compile(rules).validate(payload, 0).failures.map((f) => f.message);
}

/** JSON values whose rendering has corners: escapes, Unicode, numbers JavaScript prints oddly, nesting, long text. */
const EDGE_VALUES: unknown[] = [
  null, true, false, 0, -0, 5, '5', 0.1 + 0.2, 1e21, -1.5e-7, Number.MAX_SAFE_INTEGER,
  '', ' ', 'a "quoted" \\ word', 'Zoë 😀', '{{ not a placeholder }}', '\u2028\u2029', '</script>',
  [], [1, 'a', [true, null]], {}, { k: 7, nested: { list: [1, 2] } },
  JSON.parse('{"__proto__":{"a":1},"constructor":2,"toString":"t"}') as unknown,
  'x'.repeat(5000),
  Array.from({ length: 400 }, (_, i) => `item-${i}`),
];

const jsonValues = fc.oneof(fc.constantFrom(...EDGE_VALUES), fc.jsonValue({ maxDepth: 3 }));

describe('placeholders rendered while generating', () => {
  it('$expected and $value where it is missing render as the payload path renders the same values', () => {
    fc.assert(fc.property(jsonValues, fc.option(jsonValues, { nil: undefined }), (expected, value) => {
      // expectedValue null means "none": the rule's expected value is then null.
      const folded: RuleDefinition = {
        code: 'R', name: 'R', fieldPath: 'x', required: true, expression: 'false', expectedValue: expected,
        message: '<{{ $expected }}|{{ $value }}>',
      };
      const general: RuleDefinition = { ...folded, message: '<{{ e }}|{{ x }}>' };
      const payload = value === undefined ? { e: expected } : { e: expected, x: value };
      expect(messages([folded], payload)).toEqual(messages([general], payload));
    }), { numRuns: 300 });
  });

  it('the missing-value branch builds its message as one constant, with no text() call', () => {
    const { source, validate } = compile([{
      code: 'R', name: 'R', fieldPath: 'x', required: true, expression: '$value <= 10',
      message: 'Value {{ $value }} is over {{ $expected }} ({{ [1, "a"] }}, {{ "lit" }}, {{ 2.5 }}, {{ $index }}{{ $item }})',
    }]);
    expect(source).toContain('failure(r0, "Value  is over 10 ([1,\\"a\\"], lit, 2.5, )", "x", null, 10)');
    expect(source).toContain('failure(r0, "Value " + text(value) + " is over 10 ([1,\\"a\\"], lit, 2.5, )", "x", value, 10)');
    expect(validate({ x: 11 }, 0).failures[0].message).toBe('Value 11 is over 10 ([1,"a"], lit, 2.5, )');
    expect(validate({}, 0).failures[0].message).toBe('Value  is over 10 ([1,"a"], lit, 2.5, )');
  });

  it('a missing value reads as missing however the payload hides it: own undefined, inherited, a getter, a null-prototype object', () => {
    const folded: RuleDefinition = {
      code: 'R', name: 'R', fieldPath: 'a.x', required: true, expression: 'false', message: '[{{ $value }}]',
    };
    const general: RuleDefinition = { ...folded, message: '[{{ a.x }}]' };
    const withGetter = { get x(): unknown { return null; } };
    const hostile: unknown[] = [
      { a: { x: undefined } },
      { a: Object.create({ x: 5 }) as unknown },
      { a: withGetter },
      { a: Object.assign(Object.create(null) as object, { y: 1 }) },
      { a: new Map([['x', 1]]) },
      { a: 'x' },
      { a: 7 },
      JSON.parse('{"a":{"__proto__":{"x":3}}}') as unknown,
    ];
    for (const payload of hostile) {
      expect(messages([folded], payload)).toEqual(messages([general], payload));
      expect(messages([folded], payload)).toEqual(['[]']);
    }
  });

  it('literal placeholders render as the same values read from the payload', () => {
    const literal = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.double({ noNaN: true, noDefaultInfinity: true, min: 0 }),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer({ min: 0 }), fc.boolean(), fc.constant(null)), { maxLength: 4 }),
    );
    fc.assert(fc.property(literal, (value) => {
      const source = JSON.stringify(value);
      const folded: RuleDefinition = { code: 'R', name: 'R', expression: 'false', message: `({{ ${source} }})` };
      const general: RuleDefinition = { ...folded, message: '({{ v }})' };
      expect(messages([folded], { v: value })).toEqual(messages([general], { v: value }));
    }), { numRuns: 300 });
  });

  it('folds at most one message\'s length of placeholder text: repeating a long $expected does not copy it into the source', () => {
    // A list is held once as a constant; 190 items render as 2,100 characters of JSON, cut to 2,000.
    const expected = Array.from({ length: 190 }, (_, i) => `item${String(i).padStart(4, '0')}`);
    const message = `{{ $value }}${' {{ $expected }}'.repeat(100)}`;
    const folded: RuleDefinition = { code: 'R', name: 'R', fieldPath: 'x', required: true, expression: 'false', expectedValue: expected, message };
    const { source } = compile([folded]);
    expect(source.length).toBeLessThan(20_000);
    const general: RuleDefinition = { ...folded, message: `{{ x }}${' {{ e }}'.repeat(100)}` };
    for (const payload of [{ e: expected }, { e: expected, x: 'v' }]) {
      const got = messages([folded], payload);
      expect(got).toEqual(messages([general], payload));
      expect(got[0]).toHaveLength(2000);
    }
  });

  it('a schema violation\'s $expected stays the violation\'s limit unless the rule gives one', () => {
    const schemaRule: RuleDefinition = {
      code: 'S', name: 'S', fieldPath: 'x', schema: { type: 'number', maximum: 5 }, message: '{{ $value }} over {{ $expected }}',
    };
    expect(messages([schemaRule], { x: 7 })).toEqual(['7 over 5']);
    expect(messages([{ ...schemaRule, expectedValue: 'five' }], { x: 7 })).toEqual(['7 over five']);
    expect(messages([{ ...schemaRule, expectedValue: { max: 5 } }], { x: 7 })).toEqual(['7 over {"max":5}']);
  });
});

describe('$index joined without text()', () => {
  const rule = (message: string): RuleDefinition => ({
    code: 'L', name: 'L', forEach: 'items', fieldPath: 'items[].q', required: true, expression: '$value > 0', message,
  });
  const payload = { items: [{ q: 0 }, { q: 1 }, {}, 'x', { q: '5' }, null, { q: -1 }] };

  it.each([
    ['{{ $index }}', '{{ $index + 0 }}'],
    ['{{ $index }}{{ $index }}', '{{ $index + 0 }}{{ $index + 0 }}'],
    ['Item {{ $index }}: {{ $value }}', 'Item {{ $index + 0 }}: {{ $value }}'],
    ['{{ $index }} of {{ $item }} ({{ $expected }})', '{{ $index + 0 }} of {{ $item }} ({{ $expected }})'],
  ])('%s renders as %s', (fast, general) => {
    const got = compile([rule(fast)]).validate(payload, 0).failures.map((f) => f.message);
    expect(got).toEqual(messages([rule(general)], payload));
    // Always text: a message that is only an index is "0", not 0.
    for (const message of got) expect(typeof message).toBe('string');
  });

  it('$index and $item outside forEach render as nothing', () => {
    expect(messages([{ code: 'R', name: 'R', expression: 'false', message: '[{{ $index }}|{{ $item }}]' }], {})).toEqual(['[|]']);
  });
});

describe('len(x) against a number, decided by length where it can', () => {
  const OPS = ['<', '<=', '>', '>='] as const;
  // Strings whose code points and UTF-16 units differ: pairs, lone halves, both orders.
  const strings = fc.array(fc.constantFrom('a', 'Zoë', '😀', '\ud83d', '\ude00', ' ', '\u2028'), { maxLength: 12 }).map((parts) => parts.join(''));
  const subjects = fc.oneof(strings, fc.constantFrom<unknown>(null, 5, true, [], [1, 2, 3], {}, { a: 1, b: 2 }), fc.jsonValue({ maxDepth: 2 }));
  const bounds = fc.oneof(fc.integer({ min: -2, max: 26 }), fc.constantFrom(0.5, 2.5, 3.99, -0.5, 1e9));

  it('gives what the general comparison gives, bound on either side, for strings, arrays, objects and the rest', () => {
    fc.assert(fc.property(subjects, bounds, fc.constantFrom(...OPS), fc.boolean(), (x, k, op, boundFirst) => {
      const literal = boundFirst ? `${k} ${op} len(x)` : `len(x) ${op} ${k}`;
      // The bound read from the payload takes the general path (the comparison helpers).
      const general = boundFirst ? `k ${op} len(x)` : `len(x) ${op} k`;
      const rules: RuleDefinition[] = [
        { code: 'FAST', name: 'Fast', expression: literal },
        { code: 'GENERAL', name: 'General', expression: general },
      ];
      const failed = compile(rules).validate({ x, k }, 0).failures.map((f) => f.ruleCode);
      expect(failed.includes('FAST')).toBe(failed.includes('GENERAL'));
    }), { numRuns: 2000 });
  });

  it('is what the generated code runs for a range of lengths', () => {
    const { source, validate } = compile([{ code: 'R', name: 'R', fieldPath: 'name', expression: 'len($value) >= 1 && len($value) <= 3' }]);
    expect(source).toContain('lenAtLeast(value, 1) && lenAtMost(value, 3)');
    // Four code points in seven units; three in six.
    expect(validate({ name: 'a😀😀😀' }, 0).isValid).toBe(false);
    expect(validate({ name: '😀😀😀' }, 0).isValid).toBe(true);
  });
});
