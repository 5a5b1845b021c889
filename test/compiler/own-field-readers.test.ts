/**
 * The generated own-field readers (compiler/ruleset-source.ts) skip
 * `Object.hasOwn` when the object's prototype is Object.prototype or
 * Array.prototype and that prototype has nothing under the name. They must
 * read exactly what `Object.hasOwn(o, k) ? o[k] : undefined` reads, for
 * JSON values and for the other objects the standalone module may be
 * handed: null-prototype objects, class instances, inherited and polluted
 * names. The checks run often enough for V8 to optimize the readers, whose
 * fast path exists only in optimized code's view of maps.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpressionFunction, compileRuleset } from '../../compiler/index.ts';

const KEYS: Array<string | number> = [
  'a', 'b', 'm', 'constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '0', 0, 1, 'size',
];

class Account {
  a = 1;
  /** Undefined when read on the prototype itself, where `a` is missing. */
  get b(): unknown {
    return this.a;
  }

  m(): number {
    return 3;
  }
}

function nullPrototype(entries: Record<string, unknown>): object {
  return Object.assign(Object.create(null) as object, entries);
}

const RECEIVERS: Array<[string, unknown]> = [
  ['empty object', {}],
  ['plain object', { a: 1, b: null, m: 'x', size: 0 }],
  ['own undefined', { a: undefined }],
  ['JSON own __proto__, constructor, toString', JSON.parse('{"__proto__":{"a":1},"constructor":2,"toString":"t","valueOf":false}')],
  ['own Object.prototype names', { hasOwnProperty: 1, isPrototypeOf: [2], constructor: { constructor: 3 } }],
  ['null prototype', nullPrototype({ a: 1, constructor: 'c' })],
  ['empty null prototype', nullPrototype({})],
  ['inherits from a plain object', Object.create({ a: 1, toString: 'inherited' }) as object],
  ['inherits from a null-prototype object', Object.create(nullPrototype({ a: 1 })) as object],
  ['class instance', new Account()],
  ['array', [10, 20]],
  ['array with a named field', Object.assign([5], { a: 'named' })],
  ['array-prototype object', Object.create(Array.prototype) as object],
  ['string object', new String('ab')],
  ['map', new Map([['a', 1]])],
  ['frozen', Object.freeze({ a: 1, constructor: 0 })],
  ['string', 'abc'],
  ['number', 5],
  ['null', null],
];

/** The reader the generated ones replace: own property, else undefined. */
function reference(o: unknown, key: string | number): unknown {
  return o !== null && typeof o === 'object' && Object.hasOwn(o, key) ? (o as Record<string | number, unknown>)[key] : undefined;
}

const readers = new Map(KEYS.map((key) => {
  const compiled = compileExpressionFunction(`x[${JSON.stringify(key)}]`);
  if (!compiled.ok) throw new Error(compiled.error.message);
  return [key, compiled.evaluate] as const;
}));

function expectSameReads(receivers: Array<[string, unknown]>, rounds: number): void {
  for (let round = 0; round < rounds; round++) {
    for (const [key, read] of readers) {
      for (const [name, o] of receivers) {
        const got = read({ payload: { x: o } });
        const want = reference(o, key);
        if (!Object.is(got, want)) expect.fail(`${name}[${JSON.stringify(key)}] read ${String(got)}, want ${String(want)} (round ${round})`);
      }
    }
  }
}

describe('own-field readers', () => {
  it('read own fields only, cold and optimized', () => {
    expectSameReads(RECEIVERS, 3000);
  });

  it('are not fooled by names added to the built-in prototypes after they were optimized', () => {
    expectSameReads(RECEIVERS, 2000);
    const objectPrototype = Object.prototype as Record<string, unknown>;
    const arrayPrototype = Array.prototype as unknown as Record<string, unknown>;
    try {
      objectPrototype.a = 'polluted';
      arrayPrototype.m = 'polluted';
      Object.defineProperty(Object.prototype, 'size', { get: () => 'getter', configurable: true });
      expectSameReads(RECEIVERS, 500);
    } finally {
      delete objectPrototype.a;
      delete arrayPrototype.m;
      delete objectPrototype.size;
    }
    expectSameReads(RECEIVERS, 10);
  });

  it('read random objects as Object.hasOwn does', () => {
    const key = fc.constantFrom(...KEYS.map(String), 'x', '');
    const object = fc.dictionary(key, fc.jsonValue(), { maxKeys: 6, noNullPrototype: false });
    const receiver = fc.oneof(object, fc.array(fc.jsonValue(), { maxLength: 3 }), object.map((o) => JSON.parse(JSON.stringify(o)) as unknown));
    fc.assert(fc.property(fc.array(receiver, { minLength: 1, maxLength: 8 }), (list) => {
      expectSameReads(list.map((o, i) => [`random ${i}`, o]), 1);
    }), { seed: 20_240_615, numRuns: 300 });
  });

  it('read along rule paths as before: fieldPath, forEach and expressions', () => {
    const { validate } = compileRuleset([
      { code: 'C', name: 'Constructor', fieldPath: 'x.constructor', required: true },
      { code: 'P', name: 'Proto', fieldPath: 'x.__proto__', required: true },
      { code: 'E', name: 'Each', forEach: 'items', fieldPath: 'items[].toString', required: true },
      { code: 'X', name: 'Expr', expression: 'isEmpty(x.valueOf) && exists(x.a)' },
    ]);
    const failed = (payload: unknown): string[] => validate(payload, 0).failures.map((f) => f.fieldPath);
    expect(failed({ x: { a: 1 }, items: [{}, []] })).toEqual(['x.constructor', 'items[0].toString', 'items[1].toString', 'x.__proto__']);
    expect(failed(JSON.parse('{"x":{"a":1,"constructor":1,"__proto__":2},"items":[{"toString":1}]}'))).toEqual([]);
    expect(failed({ x: nullPrototype({ a: 1, constructor: 1, ['__proto__']: 2 }), items: [nullPrototype({ toString: 1 })] })).toEqual([]);
    expect(failed({ x: new Account(), items: [new Account()] })).toEqual(['x.constructor', 'items[0].toString', 'x.__proto__']);
  });
});
