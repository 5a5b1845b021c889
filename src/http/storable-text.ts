/**
 * Text the database cannot keep, refused at the door of every route that
 * stores what it is sent (rules, API keys, contexts) with a 400 naming the
 * field, instead of a 500 from PostgreSQL later.
 *
 * Two kinds of string are the problem, both valid in JSON and in a
 * JavaScript string but not in PostgreSQL text:
 * - the NUL character (U+0000): a `text` column refuses it outright, and a
 *   rule's stored JSON that holds it as `\u0000` cannot be read as `jsonb`,
 *   which the tag filter of GET /rules does (one such rule made that filter
 *   a 500 for the whole tenant);
 * - a lone surrogate (`\ud800` without its pair): not Unicode at all, so
 *   `jsonb` refuses it too, and the PostgreSQL driver turns it into U+FFFD
 *   in a `text` column, storing something other than what was sent.
 *
 * Validation payloads are never stored, so their routes skip this, and a
 * rule test checks only its rule, not the payload it evaluates.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appendPath } from '../../compiler/paths.ts';
import { PROBLEMS, ProblemError, type FieldError } from '../errors.ts';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored, or undefined when it can. */
function problemOf(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds a lone surrogate)';
  return undefined;
}

/** A value still to look at: where it sits is kept as a link to its parent, and spelled out only for the one reported. */
interface Pending {
  value: unknown;
  parent: Pending | undefined;
  /** Its key or index in the parent. */
  step: string | number | undefined;
}

function pathOf(entry: Pending, basePath: string): string {
  const steps: Array<string | number> = [];
  for (let at: Pending | undefined = entry; at !== undefined && at.step !== undefined; at = at.parent) steps.push(at.step);
  let path = basePath;
  for (let i = steps.length - 1; i >= 0; i--) path = appendPath(path, steps[i]);
  return path;
}

/**
 * The first string (object key or value) in a parsed JSON value that the
 * database cannot store, with its path in docs/rule-language.md's syntax.
 * Iterative, and paths are built only for what is reported: a body may
 * nest deeper than the stack, and building every path of a deep one would
 * cost its depth squared.
 *
 * @example
 * findUnstorableText({ tags: ['ok', 'a\u0000b'] }); // { path: 'tags[1]', message: 'must not contain the NUL character (U+0000)' }
 */
export function findUnstorableText(value: unknown, basePath = ''): FieldError | undefined {
  const pending: Pending[] = [{ value, parent: undefined, step: undefined }];
  while (pending.length > 0) {
    const entry = pending.pop()!;
    // A key is checked when its entry comes up, so that the first problem in document order is the one named.
    if (typeof entry.step === 'string') {
      const message = problemOf(entry.step);
      if (message !== undefined) return { path: pathOf(entry, basePath), message: `key ${message}` };
    }
    const current = entry.value;
    if (typeof current === 'string') {
      const message = problemOf(current);
      if (message !== undefined) return { path: pathOf(entry, basePath), message };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], parent: entry, step: i });
    } else if (typeof current === 'object' && current !== null) {
      const keys = Object.keys(current);
      for (let i = keys.length - 1; i >= 0; i--) {
        pending.push({ value: (current as Record<string, unknown>)[keys[i]], parent: entry, step: keys[i] });
      }
    }
  }
  return undefined;
}

/**
 * Throws 400 INVALID_BODY naming the first string in `value` (a body, or
 * the part of one at `basePath`) that the database cannot store.
 *
 * @example
 * assertStorableText(body.rule, 'rule');
 */
export function assertStorableText(value: unknown, basePath = ''): void {
  const problem = findUnstorableText(value, basePath);
  if (problem !== undefined) throw new ProblemError(PROBLEMS.unstorableBodyText(problem));
}

/**
 * A `preValidation` hook: 400 INVALID_BODY naming the first string of the
 * body or query string that the database cannot store.
 *
 * @example
 * management.addHook('preValidation', refuseUnstorableText);
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify hook without done must return a promise
export async function refuseUnstorableText(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  assertStorableText(request.body);
  const inQuery = findUnstorableText(request.query);
  if (inQuery !== undefined) {
    throw new ProblemError(PROBLEMS.unstorableQueryText(inQuery));
  }
}
