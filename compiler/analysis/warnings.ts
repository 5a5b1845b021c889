/**
 * Save-time warnings: what the analysis says about a rule that compiles
 * but probably does not do what its author meant. A warning never blocks
 * a save; it names the rule field and, inside expressions, where.
 */
import type { Position } from '../expression/errors.ts';

/**
 * - `CONSTANT`: an expression or `when` whose value does not depend on the payload.
 * - `TYPE_MISMATCH`: an operation that is false, undefined or the invalid number for every value of the kinds involved.
 * - `UNKNOWN_FIELD`: a path the payload schema does not declare.
 * - `BARE_NAME`: a bare name compared as if it were a value (`status == ACTIVE`).
 * - `NEVER_EVALUATED`: a rule that can never run.
 * - `NO_FOREACH`: `$item` or `$index` in a rule without `forEach` (always undefined).
 * - `MISSING_VALUE_MESSAGE`: `$value` in the message of a `required` rule, which shows as nothing when the field is missing.
 */
export type RuleWarningCode =
  | 'CONSTANT' | 'TYPE_MISMATCH' | 'UNKNOWN_FIELD' | 'BARE_NAME' | 'NEVER_EVALUATED' | 'NO_FOREACH'
  | 'MISSING_VALUE_MESSAGE';

/** The rule field a warning is about. */
export type WarningPath = 'expression' | 'when' | 'fieldPath' | 'forEach' | 'message' | 'enabled';

export interface RuleWarning {
  code: RuleWarningCode;
  path: WarningPath;
  message: string;
  /** 1-based, inside the field's text, as for compile errors. */
  line?: number;
  column?: number;
  /** Replacement text for what the warning points at (a path, a quoted string, an operation). */
  suggestion?: string;
}

const PATH_ORDER: readonly WarningPath[] = ['expression', 'when', 'fieldPath', 'forEach', 'message', 'enabled'];

/** Collects a rule's warnings, once each, and lists them by field and position. */
export class WarningSink {
  readonly #warnings: RuleWarning[] = [];
  readonly #seen = new Set<string>();

  add(code: RuleWarningCode, path: WarningPath, message: string, position?: Position, suggestion?: string): void {
    // The same finding twice in one field (a path written twice) is said once, at its first place.
    const key = `${code}\u0000${path}\u0000${message}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    const warning: RuleWarning = { code, path, message };
    if (position !== undefined) {
      warning.line = position.line;
      warning.column = position.column;
    }
    if (suggestion !== undefined) warning.suggestion = suggestion;
    this.#warnings.push(warning);
  }

  /** The warnings ordered by field, then line and column. */
  list(): RuleWarning[] {
    const order = (w: RuleWarning): number[] => [PATH_ORDER.indexOf(w.path), w.line ?? 0, w.column ?? 0];
    return [...this.#warnings].sort((a, b) => {
      const x = order(a);
      const y = order(b);
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
  }
}
