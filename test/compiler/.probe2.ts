import fc from 'fast-check';
import { expressionArb } from './arbitraries.ts';
const xs = fc.sample(expressionArb(false, 4, 'any'), { numRuns: 700, seed: 20240615 });
const n = xs.filter((x) => x.includes('round(')).length;
console.log('with round', n, 'total', xs.length, 'distinct', new Set(xs).size);
console.log(xs.slice(0, 30).join('\n'));
