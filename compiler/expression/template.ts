/**
 * Message templates (3.6): text with `{{ expression }}` placeholders in the
 * rule language. A placeholder ends at the first `}}`. Each placeholder is
 * checked like an expression, with positions reported inside the whole
 * template, and rendered only when the rule fails.
 */
import type { CompilerLimits } from '../types.ts';
import { shiftedBy, type ExpressionError } from './errors.ts';
import type { Expr } from './ir.ts';
import type { LowerOptions } from './lower.ts';
import { compileExpression, patternSizeOf } from './compile-expression.ts';
import { BoundedMemo } from './bounded-memo.ts';
import { positionOf } from './parse.ts';
import { MAX_FIELD_PATTERN_WEIGHT } from '../regex/pattern-size.ts';

export type TemplatePart = { kind: 'text'; text: string } | { kind: 'expr'; expr: Expr };

export type TemplateResult = { ok: true; parts: TemplatePart[] } | { ok: false; error: ExpressionError };

/**
 * Splits and checks a template.
 *
 * @example
 * compileTemplate('Amount {{ $value }} too high', options);
 * // { ok: true, parts: [text 'Amount ', expr $value, text ' too high'] }
 */
export function compileTemplate(
  template: string,
  limits: CompilerLimits,
  options: Omit<LowerOptions, 'map' | 'limits'>,
): TemplateResult {
  if (typeof template !== 'string') return compileUncached(template, limits, options);
  // Rules of a context often share one message; checked once, reused (the parts are never mutated).
  const tableNames = options.tableNames === undefined ? '' : [...options.tableNames].sort().join(',');
  const key = `${tableNames}:${limits.maxTemplateLength}:${limits.maxExpressionLength}:${limits.maxNestingDepth}:${limits.maxCallbackDepth}:${limits.maxPatternLength}:${template}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const result = compileUncached(template, limits, options);
  const weight = result.ok ? patternSizeOf(result.parts.flatMap((part) => (part.kind === 'text' ? [] : [part.expr]))) : 0;
  memo.set(key, result, weight);
  return result;
}

/** Recently checked templates; bounded by count and by the regex programs they hold (bounded-memo.ts). */
const memo = new BoundedMemo<TemplateResult>(1024, 2 * MAX_FIELD_PATTERN_WEIGHT);

function compileUncached(
  template: string,
  limits: CompilerLimits,
  options: Omit<LowerOptions, 'map' | 'limits'>,
): TemplateResult {
  if (typeof template !== 'string') return { ok: false, error: { code: 'SYNTAX_ERROR', message: 'message must be a string' } };
  if (template.length > limits.maxTemplateLength) {
    return {
      ok: false,
      error: {
        code: 'TOO_LONG',
        message: `message is longer than ${limits.maxTemplateLength} characters`,
        // Where it passes the bound, as for an expression that is too long.
        ...positionOf(template, limits.maxTemplateLength),
      },
    };
  }
  const parts: TemplatePart[] = [];
  let pos = 0;
  while (pos < template.length) {
    const open = template.indexOf('{{', pos);
    if (open < 0) break;
    const close = template.indexOf('}}', open + 2);
    if (close < 0) {
      return {
        ok: false,
        error: { code: 'SYNTAX_ERROR', message: 'a placeholder `{{` is not closed with `}}`', ...positionOf(template, open) },
      };
    }
    if (open > pos) parts.push({ kind: 'text', text: template.slice(pos, open) });
    const source = template.slice(open + 2, close);
    const compiled = compileExpression(source, limits, {
      ...options,
      map: shiftedBy(positionOf(template, open + 2)),
      offset: open + 2,
    }, 'placeholder');
    if (!compiled.ok) {
      const error = compiled.error;
      // An empty placeholder has no position of its own: point at its `{{`.
      return { ok: false, error: error.line === undefined ? { ...error, ...positionOf(template, open) } : error };
    }
    parts.push({ kind: 'expr', expr: compiled.expr });
    pos = close + 2;
  }
  if (pos < template.length) parts.push({ kind: 'text', text: template.slice(pos) });
  return { ok: true, parts };
}
