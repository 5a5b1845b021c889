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
