/**
 * Bundled into standalone modules that have patterns the regex policy sent
 * to RE2 (docs/rule-language.md). The RE2 source was computed at build time by the
 * same rewrite the service uses (`compiler/regex/re2-syntax.ts`), so the
 * module carries re2js but not the pattern parser or the linear-time proof.
 */
import { RE2JS } from 're2js';

/** What generated code and Ajv call: search semantics, like `RegExp#test`. */
export interface BundledMatcher {
  test(s: string): boolean;
}

/**
 * A matcher over an RE2 source, behaving like the service's RE2 matchers
 * in `compiler/regex/compile-pattern.ts`.
 *
 * @example
 * re2Matcher('(?:\\x{61}+)').test('baa'); // true
 */
export function re2Matcher(re2Source: string): BundledMatcher {
  const re2 = RE2JS.compile(re2Source);
  return Object.freeze({ test: (s: string): boolean => re2.test(String(s)) });
}
