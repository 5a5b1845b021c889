/**
 * Translation of driver failures into the storage contract's errors. A
 * database that cannot be reached must surface as UnavailableError (503),
 * never as an unexplained 500, and a constraint the database enforces
 * under concurrency surfaces as the same ConflictError a pre-check gives.
 */
import { ConflictError, UnavailableError } from './types.ts';

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
]);

// SQLSTATEs meaning "this server is not serving you now": admin/crash
// shutdown, starting up, too many connections, and all of class 08.
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

const UNAVAILABLE_MESSAGES = [
  'connection terminated',
  'timeout exceeded when trying to connect',
  'query read timeout',
  'connection error',
  'cannot use a pool after calling end',
  'client was closed',
  'not queryable',
  'pglite is closed',
  'pglite not initialized',
  'driver has already been destroyed',
];

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the error (or its cause, e.g. a failed migration's) says the database cannot be reached, not that a statement was wrong. */
export function isConnectionError(error: unknown, depth = 0): boolean {
  if (error instanceof UnavailableError) return true;
  if (depth > 4) return false;
  if (error instanceof AggregateError && error.errors.some((e) => isConnectionError(e, depth + 1))) return true;
  if (error instanceof Error && error.cause !== undefined && isConnectionError(error.cause, depth + 1)) return true;
  const code = codeOf(error);
  if (code !== undefined) return NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08');
  // Drivers raise these without a code; an error with a code of its own
  // (a SQLSTATE, or an application error from beforeCommit) is judged by
  // that code alone, whatever its message says.
  const message = error instanceof Error ? error.message.toLowerCase() : '';
  return UNAVAILABLE_MESSAGES.some((m) => message.includes(m));
}

/**
 * The SQLSTATE when the database refused a statement for the data in its
 * rows (class 22, data exception, e.g. a value it cannot take; class 23,
 * integrity constraint, e.g. a foreign key's row is gone), looking through
 * `cause` as guard() wraps a unique violation: it answered, and the same
 * statement without the bad row would pass. Undefined for anything else:
 * an outage (isConnectionError), or a failure that is not about a row
 * (disk full, read only, a timeout).
 *
 * @example
 * refusedRowState(error); // '23503' for a sample whose tenant was removed
 */
export function refusedRowState(error: unknown): string | undefined {
  if (isConnectionError(error)) return undefined;
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 5; at = (at as { cause?: unknown }).cause, depth++) {
    const code = codeOf(at);
    if (code !== undefined && /^2[23][0-9A-Z]{3}$/.test(code)) return code;
  }
  return undefined;
}

/** True for a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return codeOf(error) === '23505';
}

/**
 * Runs a storage operation and rewrites driver errors: connection
 * failures become UnavailableError, unique violations ConflictError.
 * Errors of the contract (and anything beforeCommit threw) pass unchanged.
 */
export async function guard<T>(operation: () => Promise<T>, conflictMessage = 'conflicts with an existing record'): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (isConnectionError(error)) {
      throw new UnavailableError('the database is unavailable', { cause: error });
    }
    if (isUniqueViolation(error)) {
      throw new ConflictError(conflictMessage, { cause: error });
    }
    throw error;
  }
}
