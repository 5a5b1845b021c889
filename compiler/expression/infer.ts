/**
 * Expected-value inference (3.6): when a rule gives no expectedValue and its
 * whole expression is `F op L`, `L op F` (op one of `< <= > >= == !=`,
 * `===`/`!==` being the same operators) or `[literals].includes(F)`, the
 * literal side is the expected value. F is `$value`, the path of the
 * rule's fieldPath (`loan.amount`, `$.loan.amount`, `$["loan"].amount`),
 * or `$item.x` for a fieldPath `<forEach>[].x`.
 */
import type { PathSegment } from '../paths.ts';
import { constantValue, type Expr } from './ir.ts';

/** The rule's path, as inference needs it. */
export interface InferenceTarget {
  /** Segments of the fieldPath, if any; with forEach, `[]` follows the forEach path. */
  fieldPath?: PathSegment[];
}

/** The inferred expected value, or undefined when nothing can be inferred. */
export function inferExpected(e: Expr, target: InferenceTarget): { value: unknown } | undefined {
  if (e.kind === 'binary' && (e.op === '==' || e.op === '!=' || e.op === '<' || e.op === '<=' || e.op === '>' || e.op === '>=')) {
    const right = constantValue(e.right);
    if (right.ok && isSubject(e.left, target)) return { value: right.value };
    const left = constantValue(e.left);
    if (left.ok && isSubject(e.right, target)) return { value: left.value };
    return undefined;
  }
  if (e.kind === 'method' && e.method === 'includes' && e.object.kind === 'array') {
    const list = constantValue(e.object);
    if (list.ok && isSubject(e.args[0], target)) return { value: list.value };
  }
  return undefined;
}

/**
 * The other side of a comparison of the rule's value (`F op X` or `X op F`),
 * whatever it is: a decision table's rule takes `$row.maxAmount` of
 * `$value <= $row.maxAmount` as its expected value, read per matched row.
 */
export function comparedOperand(e: Expr, target: InferenceTarget): Expr | undefined {
  if (e.kind !== 'binary' || !(e.op === '==' || e.op === '!=' || e.op === '<' || e.op === '<=' || e.op === '>' || e.op === '>=')) return undefined;
  if (isSubject(e.left, target)) return e.right;
  if (isSubject(e.right, target)) return e.left;
  return undefined;
}

/** Keys read from a root, outermost first: `$item.a[0]` is item + ['a', 0]. */
function pathOf(e: Expr): { root: string; keys: (string | number)[] } | undefined {
  const keys: (string | number)[] = [];
  let x = e;
  while (x.kind === 'member') {
    keys.unshift(x.key);
    x = x.object;
  }
  return x.kind === 'root' ? { root: x.name, keys } : undefined;
}

function sameKeys(keys: (string | number)[], segments: PathSegment[]): boolean {
  if (keys.length !== segments.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const s = segments[i];
    const wanted = 'key' in s ? s.key : 'index' in s ? String(s.index) : undefined;
    if (wanted === undefined || String(keys[i]) !== wanted) return false;
  }
  return true;
}

function isSubject(e: Expr, target: InferenceTarget): boolean {
  const path = pathOf(e);
  if (path === undefined) return false;
  if (path.root === 'value') return path.keys.length === 0;
  const field = target.fieldPath;
  if (field === undefined) return false;
  const each = field.findIndex((s) => 'each' in s);
  if (each >= 0) return path.root === 'item' && sameKeys(path.keys, field.slice(each + 1));
  return path.root === 'payload' && sameKeys(path.keys, field);
}
