/**
 * Source positions on the IR (compiler/expression/source-span.ts): every
 * node lowered from the author's text says where it was written, as offsets
 * into the field and as the line and column compile errors use, so passes
 * over the IR can point into the rule without reading acorn's tree again.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../compiler/index.ts';
import { compileExpression } from '../../compiler/expression/compile-expression.ts';
import { identity } from '../../compiler/expression/errors.ts';
import type { Expr } from '../../compiler/expression/ir.ts';
import { spanOf } from '../../compiler/expression/source-span.ts';
import { compileTemplate } from '../../compiler/expression/template.ts';
import { compilePattern } from '../../compiler/regex/index.ts';

const options = { compilePattern: (pattern: string) => compilePattern(pattern, DEFAULT_LIMITS), map: identity };

function lowered(source: string): Expr {
  const result = compileExpression(source, DEFAULT_LIMITS, options);
  if (!result.ok) throw new Error(result.error.message);
  return result.expr;
}

/** The text each span covers, read back from the source. */
function written(source: string, e: Expr): string | undefined {
  const span = spanOf(e);
  return span === undefined ? undefined : source.slice(span.start, span.end);
}

describe('source spans on the IR', () => {
  it('covers each node with the text it was lowered from', () => {
    const source = 'len(name) <= 40 && items.every(i => i.qty > 0)';
    const root = lowered(source);
    if (root.kind !== 'logical') throw new Error(root.kind);
    expect(written(source, root)).toBe(source);
    expect(written(source, root.left)).toBe('len(name) <= 40');
    expect(written(source, root.right)).toBe('items.every(i => i.qty > 0)');
    if (root.right.kind !== 'callback') throw new Error(root.right.kind);
    expect(written(source, root.right.body)).toBe('i.qty > 0');
    expect(spanOf(root.right.body)).toMatchObject({ line: 1, column: 37 });
  });

  it('gives lines and columns as compile errors do, on later lines too', () => {
    const source = 'a &&\n  b > 1';
    const root = lowered(source);
    if (root.kind !== 'logical') throw new Error(root.kind);
    expect(spanOf(root.right)).toEqual({ start: 7, end: 12, line: 2, column: 3 });
  });

  it('places a placeholder inside the whole message', () => {
    const template = 'Amount {{ $value * 2 }} is too high';
    const result = compileTemplate(template, DEFAULT_LIMITS, { compilePattern: options.compilePattern });
    if (!result.ok) throw new Error(result.error.message);
    const part = result.parts[1];
    if (part.kind !== 'expr') throw new Error(part.kind);
    expect(written(template, part.expr)).toBe('$value * 2');
    expect(spanOf(part.expr)).toMatchObject({ line: 1, column: 11 });
  });

  it('leaves structural comparisons alone: the span is not part of the node as JSON', () => {
    expect(JSON.stringify(lowered('a  ==  1'))).toBe(JSON.stringify(lowered('a == 1')));
  });
});
