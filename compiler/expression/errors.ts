/**
 * Diagnostics of the expression stage: a stable code, a message naming
 * what was refused, and a 1-based position inside the field's text.
 */
import type { CompileErrorCode } from '../types.ts';

export interface ExpressionError {
  code: CompileErrorCode;
  message: string;
  line?: number;
  column?: number;
}

/** A 1-based position. */
export interface Position {
  line: number;
  column: number;
}

/** Thrown inside the checker and caught at its entry; never escapes the compiler. */
export class ExpressionFailure extends Error {
  readonly error: ExpressionError;

  constructor(error: ExpressionError) {
    super(error.message);
    this.error = error;
  }
}

/** Maps a position inside a placeholder's source to a position in the whole template. */
export type PositionMap = (position: Position) => Position;

export const identity: PositionMap = (position) => position;

/** The map for a piece of text that starts at `origin` in its field. */
export function shiftedBy(origin: Position): PositionMap {
  return (p) => (p.line === 1
    ? { line: origin.line, column: origin.column + p.column - 1 }
    : { line: origin.line + p.line - 1, column: p.column });
}
