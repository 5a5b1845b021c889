/**
 * The reference answers for regex tests: `RegExp#test` of a `u` pattern as
 * the specification defines it, from V8's own engine. Run it on short inputs
 * only: the patterns under test may backtrack catastrophically.
 */

/**
 * `RegExp#test` of a `u` pattern as the specification defines it: match
 * attempts start only at code-point boundaries. V8 also tries a zero-width
 * match between the two halves of a surrogate pair: `/\B/u.exec('a😀a')`
 * matches at index 2, where the specification finds no match. RE2 and the
 * DFA follow the specification, and so does this oracle; elsewhere V8's
 * answer is the specification's.
 */
export function specTest(pattern: string, s: string): boolean {
  const sticky = new RegExp(pattern, 'uy');
  for (let i = 0; i <= s.length; i++) {
    const insidePair = i > 0 && i < s.length && isLeadSurrogate(s.charCodeAt(i - 1)) && isTrailSurrogate(s.charCodeAt(i));
    if (insidePair) continue;
    sticky.lastIndex = i;
    if (sticky.test(s)) return true;
  }
  return false;
}

function isLeadSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isTrailSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
