/**
 * The payload guard of product.md 6: at most `maxDepth` levels (the payload
 * object is level 1; objects and arrays both count) and finite numbers only.
 * JSON.parse turns `1e400` into Infinity and accepts any nesting, while the
 * compiled validators, ajv and JSON.stringify recurse, so this check runs
 * before any of them. It is iterative so that it cannot overflow itself.
 */
import { appendPath } from '../../compiler/paths.ts';
import type { FieldError } from '../errors.ts';

/** How big a payload is, for the cost estimate of src/validators/evaluation-cost.ts. */
export interface PayloadSize {
  /** Values of any kind, the payload itself included. */
  values: number;
  /** Characters of strings and keys. */
  characters: number;
}

/**
 * The `n` of the cost model. Characters weigh less than values: string
 * work (comparison, regexes on linear engines, case changes) runs over
 * contiguous memory and costs a fraction of a step per character.
 */
export function sizeOf(size: PayloadSize): number {
  return size.values + size.characters / 16;
}

/**
 * The first violation in `payload`, reported under `basePath` (e.g.
 * `payload` or `items[2].payload`), or undefined when the payload is fine.
 * When `size` is given, the payload's size is added to it (the walk is
 * the same one).
 *
 * @example
 * checkPayload({ a: 1e400 }, 'payload', 64); // { path: 'payload.a', message: 'must be a finite number' }
 */
export function checkPayload(payload: unknown, basePath: string, maxDepth: number, size?: PayloadSize): FieldError | undefined {
  // Paths are built only when something fails: each container is recorded
  // as (parent, key), numbers and existing strings, so a payload that passes
  // costs no string building at all.
  const values: unknown[] = [payload];
  const depths: number[] = [1];
  const nodes: number[] = [0];
  const parents: number[] = [-1];
  const keysOf: Array<string | number> = [''];
  let count = 1;
  let characters = typeof payload === 'string' ? payload.length : 0;
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    const node = nodes.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) return { path: pathOf(basePath, parents, keysOf, node), message: `is nested deeper than ${maxDepth} levels` };
    if (Array.isArray(value)) {
      count += value.length;
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (typeof child === 'string') {
          characters += child.length;
        } else if (typeof child === 'number') {
          if (!Number.isFinite(child)) return { path: appendPath(pathOf(basePath, parents, keysOf, node), i), message: 'must be a finite number' };
        } else if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth + 1);
          nodes.push(parents.length);
          parents.push(node);
          keysOf.push(i);
        }
      }
    } else {
      const keys = Object.keys(value);
      count += keys.length;
      for (const key of keys) {
        const child: unknown = (value as Record<string, unknown>)[key];
        characters += key.length;
        if (typeof child === 'string') {
          characters += child.length;
        } else if (typeof child === 'number') {
          if (!Number.isFinite(child)) return { path: appendPath(pathOf(basePath, parents, keysOf, node), key), message: 'must be a finite number' };
        } else if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth + 1);
          nodes.push(parents.length);
          parents.push(node);
          keysOf.push(key);
        }
      }
    }
  }
  if (size !== undefined) {
    size.values += count;
    size.characters += characters;
  }
  return undefined;
}

/** The path of a recorded container: its keys from the root down, appended to `basePath`. */
function pathOf(basePath: string, parents: readonly number[], keysOf: ReadonlyArray<string | number>, node: number): string {
  const keys: Array<string | number> = [];
  for (let at = node; at > 0; at = parents[at]!) keys.push(keysOf[at]!);
  let path = basePath;
  for (let i = keys.length - 1; i >= 0; i--) path = appendPath(path, keys[i]!);
  return path;
}
