/**
 * `date()` reads ISO-8601 text by hand (compiler/runtime.ts). It must
 * accept exactly the texts the regex below accepts, with exactly the same
 * epoch milliseconds: the regex version is kept here as the reference it
 * replaced, and the two are compared on a table of edge cases and on random
 * texts built from date-like pieces, mutated, and plain random.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { daysBetween, date } from '../../compiler/runtime.ts';

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

const DAY_MS = 86_400_000;

function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The regex implementation `date()` had before the hand-written reader. */
function referenceParseDate(x: string): number | undefined {
  const m = ISO_DATE_TIME.exec(x);
  if (m === null) return undefined;
  const year = +m[1];
  const month = +m[2];
  const day = +m[3];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  let ms = daysFromCivil(year, month, day) * DAY_MS;
  if (m[4] !== undefined) {
    const hour = +m[4];
    const minute = +m[5];
    const second = m[6] === undefined ? 0 : +m[6];
    if (hour > 23 || minute > 59 || second > 59) return undefined;
    const fraction = m[7] === undefined ? 0 : +m[7].slice(0, 3).padEnd(3, '0');
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + fraction;
    if (m[9] !== undefined) {
      const offsetHours = +m[10];
      const offsetMinutes = m[11] === undefined ? 0 : +m[11];
      if (offsetHours > 23 || offsetMinutes > 59) return undefined;
      const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
      ms += m[9] === '+' ? -offset : offset;
    }
  }
  return ms;
}

/** Same acceptance and the same number, -0 told apart from 0. */
function expectSameAsReference(text: string): void {
  const expected = referenceParseDate(text);
  const actual = date(text);
  expect(Object.is(actual, expected), `${JSON.stringify(text)}: got ${actual}, reference ${expected}`).toBe(true);
}

const ARABIC_INDIC_ONE = '\u0661';
const FULLWIDTH_ONE = '\uff11';

/** [text, epoch ms or undefined]: the values are worked out independently of both readers. */
const TABLE: Array<[string, number | undefined]> = [
  ['2024-02-29', Date.UTC(2024, 1, 29)],
  ['2023-02-29', undefined],
  ['2000-02-29', Date.UTC(2000, 1, 29)],
  ['1900-02-29', undefined],
  ['2024-04-31', undefined],
  ['2024-12-31', Date.UTC(2024, 11, 31)],
  ['2024-13-01', undefined],
  ['2024-00-10', undefined],
  ['2024-01-00', undefined],
  ['0000-01-01', -62_167_219_200_000],
  ['9999-12-31T23:59:59.999Z', 253_402_300_799_999],
  ['1970-01-01', 0],
  ['1969-12-31T23:59:59.999Z', -1],
  ['2024-05-02T10:30', Date.UTC(2024, 4, 2, 10, 30)],
  ['2024-05-02t10:30', Date.UTC(2024, 4, 2, 10, 30)],
  ['2024-05-02 10:30', Date.UTC(2024, 4, 2, 10, 30)],
  ['2024-05-02_10:30', undefined],
  ['2024-05-02T10:30:15', Date.UTC(2024, 4, 2, 10, 30, 15)],
  ['2024-05-02T24:00', undefined],
  ['2024-05-02T23:60', undefined],
  ['2024-05-02T23:59:60', undefined],
  ['2024-05-02T23:59:59', Date.UTC(2024, 4, 2, 23, 59, 59)],
  ['2024-05-02T10:30:15.5', Date.UTC(2024, 4, 2, 10, 30, 15, 500)],
  ['2024-05-02T10:30:15.05', Date.UTC(2024, 4, 2, 10, 30, 15, 50)],
  ['2024-05-02T10:30:15.123', Date.UTC(2024, 4, 2, 10, 30, 15, 123)],
  ['2024-05-02T10:30:15.1239', Date.UTC(2024, 4, 2, 10, 30, 15, 123)],
  ['2024-05-02T10:30:15.999999999', Date.UTC(2024, 4, 2, 10, 30, 15, 999)],
  ['2024-05-02T10:30:15.', undefined],
  ['2024-05-02T10:30.5', undefined],
  ['2024-05-02T10:30:15Z', Date.UTC(2024, 4, 2, 10, 30, 15)],
  ['2024-05-02T10:30:15z', Date.UTC(2024, 4, 2, 10, 30, 15)],
  ['2024-05-02T10:30Z', Date.UTC(2024, 4, 2, 10, 30)],
  ['2024-05-02T10:30:15ZZ', undefined],
  ['2024-05-02Z', undefined],
  ['2024-05-02T10:30+02:00', Date.UTC(2024, 4, 2, 8, 30)],
  ['2024-05-02T10:30+0200', Date.UTC(2024, 4, 2, 8, 30)],
  ['2024-05-02T10:30+02', Date.UTC(2024, 4, 2, 8, 30)],
  ['2024-05-02T10:30-05:30', Date.UTC(2024, 4, 2, 16, 0)],
  ['2024-05-02T10:30:15.25-00:00', Date.UTC(2024, 4, 2, 10, 30, 15, 250)],
  ['2024-05-02T10:30+02:', undefined],
  ['2024-05-02T10:30+2:00', undefined],
  ['2024-05-02T10:30+02:0', undefined],
  ['2024-05-02T10:30+020', undefined],
  ['2024-05-02T10:30+02:000', undefined],
  ['2024-05-02T10:30+24:00', undefined],
  ['2024-05-02T10:30+23:59', Date.UTC(2024, 4, 2, 10, 30) - (23 * 60 + 59) * 60_000],
  ['2024-05-02T10:30+02:60', undefined],
  ['2024-05-02T10:30\u221202:00', undefined],
  ['2024-05-02T', undefined],
  ['2024-05-02T10', undefined],
  ['2024-05-02T10:', undefined],
  ['2024-05-02T10:3', undefined],
  ['2024-05-02T10:30:', undefined],
  ['2024-05-02T10:30:1', undefined],
  ['', undefined],
  ['2024', undefined],
  ['2024-05', undefined],
  ['2024-05-2', undefined],
  ['24-05-02', undefined],
  ['12024-05-02', undefined],
  ['2024/05/02', undefined],
  ['2024-05-02 ', undefined],
  [' 2024-05-02', undefined],
  ['2024-05-02\n', undefined],
  ['2024-05-02x', undefined],
  ['+002024-05-02', undefined],
  [`202${ARABIC_INDIC_ONE}-05-02`, undefined],
  [`2024-05-0${FULLWIDTH_ONE}`, undefined],
  [`2024-05-02T1${ARABIC_INDIC_ONE}:30`, undefined],
  [`2024-05-02T10:30:15.${ARABIC_INDIC_ONE}`, undefined],
  [`2024-05-02T10:30+0${ARABIC_INDIC_ONE}`, undefined],
];

describe('date() reads ISO-8601 text by hand', () => {
  it.each(TABLE)('%j', (text, expected) => {
    expect(referenceParseDate(text), 'the table itself').toBe(expected);
    expectSameAsReference(text);
  });

  it('agrees with the regex on random texts built from date pieces', () => {
    const digit = fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '9', ARABIC_INDIC_ONE, FULLWIDTH_ONE);
    const digits = (min: number, max: number) => fc.array(digit, { minLength: min, maxLength: max }).map((d) => d.join(''));
    const maybe = (a: fc.Arbitrary<string>) => fc.oneof(fc.constant(''), a);
    const number2 = fc.oneof(fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, '0')), digits(0, 3));
    const text = fc.tuple(
      fc.oneof(fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')), digits(3, 5)),
      fc.constantFrom('-', '-', '-', '/', ''),
      number2,
      fc.constantFrom('-', '-', '-', ''),
      number2,
      maybe(fc.tuple(
        fc.constantFrom('T', 't', ' ', 'T', '_'),
        number2,
        fc.constantFrom(':', ':', ':', ''),
        number2,
        maybe(fc.tuple(fc.constantFrom(':', ':', '.'), number2, maybe(fc.tuple(fc.constantFrom('.', '.', ','), digits(0, 10)).map((p) => p.join('')))).map((p) => p.join(''))),
        maybe(fc.oneof(
          fc.constantFrom('Z', 'z', 'ZZ', 'Y'),
          fc.tuple(fc.constantFrom('+', '-', '\u2212'), number2, fc.constantFrom(':', '', '', ':'), maybe(number2)).map((p) => p.join('')),
        )),
      ).map((p) => p.join(''))),
      maybe(fc.constantFrom(' ', 'x', '\n', '0')),
    ).map((p) => p.join(''));
    fc.assert(fc.property(text, (t) => expectSameAsReference(t)), { seed: 20_240_502, numRuns: 20_000 });
  });

  it('agrees with the regex on valid texts with one character changed, added or removed', () => {
    const valid = fc.tuple(
      fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }),
      fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }),
      fc.integer({ min: 0, max: 999_999 }), fc.constantFrom('', 'Z', '+05:30', '-0800', '+01'),
    ).map(([y, mo, d, h, mi, s, f, zone]) => {
      const p = (n: number, w = 2) => String(n).padStart(w, '0');
      return `${p(y, 4)}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:${p(s)}.${f}${zone}`;
    });
    const alphabet = fc.constantFrom('0', '5', '9', '-', ':', 'T', ' ', 'Z', 'z', '+', '.', 'x', ARABIC_INDIC_ONE, '\ud800');
    const mutated = fc.tuple(valid, fc.nat(), alphabet, fc.constantFrom('replace', 'insert', 'delete', 'cut', 'none')).map(([t, at, c, how]) => {
      const i = at % (t.length + 1);
      if (how === 'replace') return t.slice(0, i) + c + t.slice(i + 1);
      if (how === 'insert') return t.slice(0, i) + c + t.slice(i);
      if (how === 'delete') return t.slice(0, i) + t.slice(i + 1);
      if (how === 'cut') return t.slice(0, i);
      return t;
    });
    fc.assert(fc.property(mutated, (t) => expectSameAsReference(t)), { seed: 20_240_503, numRuns: 20_000 });
  });

  it('agrees with the regex on arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (t) => expectSameAsReference(t)), { seed: 20_240_504, numRuns: 5_000 });
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789-:Tt Zz+.'), maxLength: 32 }), (t) => expectSameAsReference(t)),
      { seed: 20_240_505, numRuns: 20_000 },
    );
  });

  it('remembers its last answer without mixing up texts', () => {
    const texts = ['2024-05-02', '2024-05-02T10:30Z', 'nope', '2024-05-02', 'nope', '2024-02-30'];
    for (const t of [...texts, ...texts.reverse()]) expectSameAsReference(t);
    expect(daysBetween('2024-05-02', '2024-06-01')).toBe(30);
  });
});
