/**
 * Where an IR node was written: lower.ts puts the span of the acorn node it
 * lowered on the IR node, so that passes over the IR (the cost model, the
 * warnings) can point into the rule's text without walking acorn's tree
 * again.
 *
 * The span is a non-enumerable property `at` of the node: structural
 * comparisons of IR (generate.ts compares nodes by their JSON) compare what
 * a node computes, not where it was written, and a node rebuilt by a
 * rewrite (`{ ...e }`) simply has no span.
 */
import type { Expr } from './ir.ts';

/**
 * `start` and `end` are character offsets inside the field's text (a
 * placeholder's offsets count from the start of the whole message); `line`
 * and `column` are 1-based, as compile errors give them.
 */
export interface SourceSpan {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly column: number;
}

/** Puts `span` on `node` (once: the innermost lowering of a node wins) and returns the node. */
export function withSpan<T extends Expr>(node: T, span: SourceSpan): T {
  if (Object.isFrozen(node) || Object.prototype.hasOwnProperty.call(node, 'at')) return node;
  Object.defineProperty(node, 'at', { value: Object.freeze(span), enumerable: false });
  return node;
}

/**
 * The span of an IR node, or undefined for a node made by the compiler
 * rather than written (the payload root of a bare name) or rebuilt.
 *
 * @example
 * spanOf(lowered); // { start: 0, end: 13, line: 1, column: 1 } for `amount <= 100`
 */
export function spanOf(node: Expr): SourceSpan | undefined {
  return (node as Expr & { at?: SourceSpan }).at;
}
