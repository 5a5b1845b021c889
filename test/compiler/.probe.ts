import { compileRuleset } from '../../compiler/index.ts';
import { evaluateSource } from './reference-interpreter.ts';
const payload = { s: 'abc', n: 5, o: { k: 1 }, arr: [1, 'x'], d1: '2020-01-01T23:00:00Z', d2: '2020-01-02T01:00:00Z' };
const exprs = ['s[0]', 'sum(n)', 'abs("x")', 'round(1.005, 2)', 'round(-2.5)', 'daysBetween(d1, d2)', 's.includes(5)', 'distinct(5)', 'lower(5)', 'min()', 'min(5)', 'min([])', 'sum(arr)', '1/0', 'age("2000-02-29")', 'isDate("2020-01-01T10:00:00")', 'date("2020-01-01t10:00:00z")', 'x.length', 'o.length', 's["length"]', 'round(2.5, 16)', 'n.toFixed'];
for (const e of exprs) {
  const c = compileRuleset([{ code: 'v', name: 'v', expression: 'false', message: `{{ ${e} }}|{{ isNumber(${e}) }}|{{ exists(${e}) }}` }]);
  const got = c.errors.length ? 'ERR ' + c.errors[0].message : c.validate(payload, Date.UTC(2024, 5, 15)).failures[0].message;
  let ref: unknown; try { ref = evaluateSource(e, { payload, now: Date.UTC(2024, 5, 15) }); } catch (err) { ref = 'THROW ' + (err as Error).message; }
  console.log(e.padEnd(40), '| compiled:', got, '| ref:', ref);
}
