/**
 * Field paths (docs/rule-language.md): `loan.amount`, `items[3].qty`,
 * `items[].qty` (forEach only), `$["first-name"]`.
 *
 * A path is parsed once, at compile time, into segments; generated code and
 * the schema layer work on segments, never on path text. Reported paths are
 * rendered back with `formatPath`, so what a user reads parses again.
 */
import type { CompilerLimits } from './types.ts';
import { DEFAULT_LIMITS } from './limits.ts';

/** One step of a path: an object key, an array index, or `[]` (each element). */
export type PathSegment = { key: string } | { index: number } | { each: true };

/** Why a path was refused; `column` is 1-based in the path text. */
export interface PathError {
  code: 'INVALID_PATH';
  message: string;
  column?: number;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[A-Za-z0-9_$]/;

/** True when `value` is the error branch of `parsePath`. */
export function isPathError(value: PathSegment[] | PathError): value is PathError {
  return !Array.isArray(value);
}

/**
 * Parses a path of docs/rule-language.md. A leading `$` names the payload root and
 * adds no segment, so `$["first-name"]` is one segment and `$.a` equals `a`.
 * `[]` is accepted here; whether it may appear (forEach only) is the rule
 * compiler's decision.
 *
 * @example
 * parsePath('items[2]["first-name"]');
 * // [{ key: 'items' }, { index: 2 }, { key: 'first-name' }]
 */
export function parsePath(
  path: string,
  limits: Pick<CompilerLimits, 'maxPathLength' | 'maxPathSegments'> = DEFAULT_LIMITS,
): PathSegment[] | PathError {
  if (typeof path !== 'string') return fail('path must be a string');
  if (path.length === 0) return fail('path is empty');
  if (path === '$') return fail('"$" is the payload root, not a field; leave the path out instead', 1);
  if (path.length > limits.maxPathLength) {
    return fail(`path is longer than ${limits.maxPathLength} characters`);
  }
  const segments: PathSegment[] = [];
  let pos = 0;
  // The root marker only counts when something follows it; a bare `$` or
  // `$x` is an ordinary key.
  if (path[0] === '$' && (path[1] === '[' || path[1] === '.')) {
    pos = 1;
    if (path[1] === '.') pos = 2;
    if (path[1] === '.' && !IDENT_START.test(path[2] ?? '')) {
      return fail('expected a field name after "$."', 3);
    }
  }
  let first = pos === 0 || path[pos] !== '[';
  while (pos < path.length) {
    const ch = path[pos];
    if (ch === '[') {
      const parsed = parseBracket(path, pos);
      if ('code' in parsed) return parsed;
      segments.push(parsed.segment);
      pos = parsed.end;
    } else {
      if (!first) {
        if (ch !== '.') return fail(`unexpected ${describe(ch)}`, pos + 1);
        pos++;
      }
      const start = pos;
      if (!IDENT_START.test(path[pos] ?? '')) {
        return fail(
          pos >= path.length ? 'path ends after "."' : `expected a field name, found ${describe(path[pos])}`,
          pos + 1,
        );
      }
      pos++;
      while (pos < path.length && IDENT_PART.test(path[pos])) pos++;
      segments.push({ key: path.slice(start, pos) });
    }
    first = false;
    if (segments.length > limits.maxPathSegments) {
      return fail(`path has more than ${limits.maxPathSegments} segments`);
    }
  }
  return segments;
}

function parseBracket(
  path: string,
  open: number,
): { segment: PathSegment; end: number } | PathError {
  const pos = open + 1;
  const ch = path[pos];
  if (ch === ']') return { segment: { each: true }, end: pos + 1 };
  if (ch !== undefined && ch >= '0' && ch <= '9') {
    let end = pos;
    while (end < path.length && path[end] >= '0' && path[end] <= '9') end++;
    const digits = path.slice(pos, end);
    if (digits.length > 1 && digits[0] === '0') return fail('index has a leading zero', pos + 1);
    const index = Number(digits);
    if (!Number.isSafeInteger(index)) return fail('index is too large', pos + 1);
    if (path[end] !== ']') return fail('expected "]" after the index', end + 1);
    return { segment: { index }, end: end + 1 };
  }
  if (ch === '"') {
    const close = findStringEnd(path, pos);
    if (close < 0) return fail('unterminated string in brackets', pos + 1);
    let key: unknown;
    try {
      key = JSON.parse(path.slice(pos, close + 1));
    } catch {
      return fail('invalid string in brackets', pos + 1);
    }
    if (path[close + 1] !== ']') return fail('expected "]" after the string', close + 2);
    return { segment: { key: key as string }, end: close + 2 };
  }
  return fail('expected an index, "]" or a double-quoted key after "["', pos + 1);
}

/** Index of the closing quote of the JSON string starting at `open`, or -1. */
function findStringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

function describe(ch: string | undefined): string {
  return ch === undefined ? 'end of path' : JSON.stringify(ch);
}

function fail(message: string, column?: number): PathError {
  return column === undefined
    ? { code: 'INVALID_PATH', message }
    : { code: 'INVALID_PATH', message, column };
}

/**
 * Renders segments in the syntax `parsePath` reads. Keys that are not
 * identifiers render as `["first-name"]` (`$["first-name"]` at the start,
 * where a bracket needs the root marker); the empty path renders as `""`.
 *
 * @example
 * formatPath([{ key: 'items' }, { index: 3 }, { key: 'qty' }]); // 'items[3].qty'
 */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if ('key' in segment) {
      // A leading key "$" would read back as the root marker.
      if (IDENTIFIER.test(segment.key) && !(i === 0 && segment.key === '$')) {
        out += i === 0 ? segment.key : `.${segment.key}`;
      } else {
        out += `${i === 0 ? '$' : ''}[${JSON.stringify(segment.key)}]`;
      }
    } else if ('index' in segment) {
      out += `${i === 0 ? '$' : ''}[${segment.index}]`;
    } else {
      out += `${i === 0 ? '$' : ''}[]`;
    }
  }
  return out;
}

/**
 * Appends one key or index to an already formatted path; used at run time
 * for element-resolved paths, where re-formatting whole paths would cost.
 */
export function appendPath(base: string, step: string | number): string {
  if (typeof step === 'number') return `${base === '' ? '$' : base}[${step}]`;
  if (IDENTIFIER.test(step) && !(base === '' && step === '$')) {
    return base === '' ? step : `${base}.${step}`;
  }
  return `${base === '' ? '$' : base}[${JSON.stringify(step)}]`;
}

/**
 * A JSON Pointer (`/properties/a/0`) as a path appended to `base`;
 * all-digit segments are indices.
 *
 * @example
 * pointerToPath('/items/3/payload'); // 'items[3].payload'
 * pointerToPath('/properties/street/minLenght', 'schema'); // 'schema.properties.street.minLenght'
 */
export function pointerToPath(pointer: string, base = ''): string {
  if (pointer === '') return base;
  let path = base;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path = /^(?:0|[1-9]\d*)$/.test(segment) ? appendPath(path, Number(segment)) : appendPath(path, segment);
  }
  return path;
}
