/**
 * One expression compiled on its own, returning its raw value: for tests
 * (every operator and function checked against its expected value) and for
 * tools that preview an expression. Uses the same checker, generator and
 * runtime as `compileRuleset`.
 */
import type { CompileOptions } from './types.ts';
import { compileExpression } from './expression/compile-expression.ts';
import { identity, type ExpressionError } from './expression/errors.ts';
import { resolveLimits } from './limits.ts';
import { compilePattern } from './regex/index.ts';
import { generateExpressionFactory } from './ruleset-source.ts';
import { runtime, type Runtime } from './runtime.ts';

/** The bindings an expression sees; all optional. */
export interface ExpressionInputs {
  payload?: unknown;
  now?: number;
  value?: unknown;
  item?: unknown;
  index?: number;
  expected?: unknown;
}

export type ExpressionFunction = (inputs?: ExpressionInputs) => unknown;

type Factory = (rt: Runtime, refs: Readonly<Record<string, unknown>>) =>
  (payload: unknown, now: unknown, value: unknown, item: unknown, index: unknown, expected: unknown) => unknown;

/**
 * Compiles one expression to a function of its inputs.
 *
 * @example
 * const r = compileExpressionFunction('len(name) <= 3');
 * if (r.ok) r.evaluate({ payload: { name: 'Zoë' } }); // true
 */
export function compileExpressionFunction(
  source: string,
  options?: CompileOptions,
): { ok: true; evaluate: ExpressionFunction; source: string } | { ok: false; error: ExpressionError } {
  const limits = resolveLimits(options);
  const compiled = compileExpression(source, limits, {
    map: identity,
    compilePattern: (pattern) => {
      const result = compilePattern(pattern, limits);
      return result.ok ? { ok: true, matcher: result.matcher, weight: result.weight } : result;
    },
  });
  if (!compiled.ok) return compiled;
  const generated = generateExpressionFactory(compiled.expr);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- source generated from the whitelisted AST, by design
  const fn = (new Function(`return ${generated.source};`)() as Factory)(runtime, generated.refs);
  const evaluate: ExpressionFunction = (inputs = {}) =>
    fn(inputs.payload, inputs.now ?? 0, inputs.value, inputs.item, inputs.index, inputs.expected ?? null);
  return { ok: true, evaluate, source: generated.source };
}
