/**
 * The payload guard of docs/api.md: at most `maxDepth` levels (the payload
 * object is level 1; objects and arrays both count) and finite numbers only.
 * JSON.parse turns `1e400` into Infinity and accepts any nesting, while the
 * compiled validators, ajv and JSON.stringify recurse, so this check runs
 * before any of them.
 *
 * It runs on every validation request, so it has two walks. The fast walk
 * only answers "fits or not" and tallies the size: it recurses (never more
 * than `maxDepth` calls deep), reads keys with `for...in` (V8 then loads
 * each value through the object's enum cache instead of a megamorphic keyed
 * load) and allocates nothing. Only when it says no, or when something has
 * polluted Object.prototype, does the exact walk run: iterative, so it
 * cannot overflow, and it picks the first violation and builds its path,
 * exactly as the service has always reported them.
 */
import { appendPath } from '../../compiler/paths.ts';
import type { FieldError } from '../errors.ts';
import { objectPrototypeIsPristine } from './prototype-keys.ts';

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
 * When `size` is given and the payload is fine, the payload's size is added
 * to it (the walk is the same one).
 *
 * @example
 * checkPayload({ a: 1e400 }, 'payload', 64); // { path: 'payload.a', message: 'must be a finite number' }
 */
export function checkPayload(payload: unknown, basePath: string, maxDepth: number, size?: PayloadSize): FieldError | undefined {
  if (objectPrototypeIsPristine() && payloadFits(payload, maxDepth)) {
    if (size !== undefined) {
      size.values += tally.values;
      size.characters += tally.characters;
    }
    return undefined;
  }
  return firstViolation(payload, basePath, maxDepth, size);
}

/**
 * The payload's `n` for the cost model (sizeOf of its size), or -1 when it
 * breaks the guard; checkPayload then names the violation. For call sites
 * that need only the figure: no size object, and no base path to build
 * (such as `items[${i}].payload`) unless the payload is refused.
 *
 * @example
 * measurePayload({ ab: 'xyz' }, 64); // 2.3125: two values, five characters
 * measurePayload({ a: NaN }, 64); // -1
 */
export function measurePayload(payload: unknown, maxDepth: number): number {
  if (objectPrototypeIsPristine() && payloadFits(payload, maxDepth)) return sizeOf(tally);
  const size: PayloadSize = { values: 0, characters: 0 };
  return firstViolation(payload, '', maxDepth, size) === undefined ? sizeOf(size) : -1;
}

// The fast walk's running totals. One module-level object rather than one
// per call: the walk is synchronous and JSON values run no code of their
// own (no getters, no proxies), so no other walk can start in the middle.
const tally: PayloadSize = { values: 0, characters: 0 };

/**
 * True when `payload` is within `maxDepth` levels and holds finite numbers
 * only, with its size left in `tally`; false says "ask firstViolation".
 * Reads object keys with `for...in`, so it needs objectPrototypeIsPristine().
 */
function payloadFits(payload: unknown, maxDepth: number): boolean {
  tally.values = 1;
  tally.characters = 0;
  if (typeof payload === 'string') {
    tally.characters = payload.length;
    return true;
  }
  if (typeof payload !== 'object' || payload === null) return true;
  if (maxDepth < 1) return false;
  try {
    return containerFits(payload, maxDepth - 1);
  } catch (error) {
    // A stack already deep when the guard was called, or a huge maxDepth:
    // the iterative walk gives the answer instead.
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/**
 * Adds `container`'s values and characters to `tally` when it and all it
 * holds fit; `levelsLeft` is how many more levels may sit below it.
 * Arrays are read by index, so only plain objects meet `for...in`.
 */
function containerFits(container: object, levelsLeft: number): boolean {
  let values = 0;
  let characters = 0;
  if (Array.isArray(container)) {
    values = container.length;
    for (let i = 0; i < container.length; i++) {
      const child: unknown = container[i];
      if (typeof child === 'string') {
        characters += child.length;
      } else if (typeof child === 'number') {
        if (!Number.isFinite(child)) return false;
      } else if (typeof child === 'object' && child !== null) {
        if (levelsLeft < 1 || !containerFits(child, levelsLeft - 1)) return false;
      }
    }
  } else {
    for (const key in container) {
      const child: unknown = (container as Record<string, unknown>)[key];
      values++;
      characters += key.length;
      if (typeof child === 'string') {
        characters += child.length;
      } else if (typeof child === 'number') {
        if (!Number.isFinite(child)) return false;
      } else if (typeof child === 'object' && child !== null) {
        if (levelsLeft < 1 || !containerFits(child, levelsLeft - 1)) return false;
      }
    }
  }
  tally.values += values;
  tally.characters += characters;
  return true;
}

/**
 * The exact walk: the violation the service reports for a payload the
 * fast walk refused, or the size of one it could not walk (polluted
 * Object.prototype, stack too short). Paths are built only for the
 * violation: each container is recorded as (parent, key), numbers and
 * existing strings. Each container's numbers are checked before any of its
 * children is entered, and children are entered last first; that order
 * decides which violation is "first".
 */
function firstViolation(payload: unknown, basePath: string, maxDepth: number, size?: PayloadSize): FieldError | undefined {
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
  for (let at = node; at > 0; at = parents[at]!) keys.push(keysOf[at]);
  let path = basePath;
  for (let i = keys.length - 1; i >= 0; i--) path = appendPath(path, keys[i]);
  return path;
}
