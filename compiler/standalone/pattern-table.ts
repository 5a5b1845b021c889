/**
 * The patterns of a standalone module, each decided at build time exactly
 * as the service decides it (`compilePattern`: native RegExp when proven
 * linear, else RE2 over the rewritten source), and written into one
 * virtual module that both `matches()` refs and Ajv's schema code read.
 * Deciding here keeps the pattern parser and the linear-time proof out of
 * the bundle; re2js is bundled only when some pattern needs it.
 */
import { compilePattern } from '../regex/compile-pattern.ts';
import { parsePattern } from '../regex/parse-pattern.ts';
import { toRe2Syntax } from '../regex/re2-syntax.ts';
import { literal } from './literal.ts';

/** One pattern and how the module builds its matcher. */
type Entry = { engine: 'native' } | { engine: 're2'; re2Source: string };

/** Patterns collected while a module is built; `source` renders the virtual module. */
export class PatternTable {
  readonly #entries = new Map<string, Entry>();

  /**
   * Records a pattern. Throws when the regex policy refuses it: every pattern
   * here was accepted when its rule was saved, so a refusal means the build
   * does not match the service.
   */
  add(pattern: string): void {
    if (this.#entries.has(pattern)) return;
    // Length limits were applied when the rule was planned; here only the engine is decided.
    const compiled = compilePattern(pattern, { maxPatternLength: Number.POSITIVE_INFINITY });
    if (!compiled.ok) throw new Error(`${compiled.code}: pattern ${JSON.stringify(pattern)}: ${compiled.message}`);
    if (compiled.engine === 'native') {
      this.#entries.set(pattern, { engine: 'native' });
      return;
    }
    const parsed = parsePattern(pattern);
    if (!parsed.ok) throw new Error(`INVALID_PATTERN: pattern ${JSON.stringify(pattern)}: ${parsed.error.message}`);
    this.#entries.set(pattern, { engine: 're2', re2Source: toRe2Syntax(parsed.ast) });
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The virtual module: `matcher(pattern)` for `matches()` refs and
   * `patternEngine(pattern, flags)` in Ajv's `code.regExp` shape. Patterns
   * appear only inside string literals.
   */
  source(re2MatcherPath: string): string {
    const lines: string[] = [];
    const usesRe2 = [...this.#entries.values()].some((e) => e.engine === 're2');
    if (usesRe2) lines.push(`import { re2Matcher } from ${literal(re2MatcherPath)};`);
    lines.push('const table = new Map([');
    for (const [pattern, entry] of this.#entries) {
      const make = entry.engine === 'native'
        ? `new RegExp(${literal(pattern)}, "u")`
        : `re2Matcher(${literal(entry.re2Source)})`;
      lines.push(`  [${literal(pattern)}, ${make}],`);
    }
    lines.push(']);');
    lines.push(
      'export function matcher(pattern) {',
      '  const found = table.get(pattern);',
      '  if (found === undefined) throw new Error("unknown pattern");',
      '  return found;',
      '}',
      'export function patternEngine(pattern, flags) {',
      '  if (flags !== "u") throw new Error("only the u flag is supported");',
      '  return matcher(pattern);',
      '}',
    );
    return lines.join('\n');
  }
}
