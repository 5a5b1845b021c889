/**
 * Opaque list cursors: base64url of the last item's createdAt and id. The
 * list is ordered by (createdAt, id) and resumes strictly after the
 * cursor's pair, so rows inserted meanwhile never shift a page.
 */
import { isUuid } from './identifiers.ts';
import { InvalidInputError } from './types.ts';

/** A position in the (createdAt, id) order. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

/** Encodes the position after which the next page starts. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id]), 'utf8').toString('base64url');
}

/** Decodes a cursor; InvalidInputError (path `cursor`) for anything this module did not produce. */
export function decodeCursor(cursor: string): CursorPosition {
  const invalid = new InvalidInputError('cursor is not valid', 'cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid;
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || typeof id !== 'string' || !isUuid(id)) throw invalid;
  const date = new Date(createdAt);
  if (Number.isNaN(date.getTime()) || date.toISOString() !== createdAt) throw invalid;
  return { createdAt: date, id };
}
