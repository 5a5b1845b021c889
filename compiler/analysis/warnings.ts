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
 * - `TABLE_OVERLAP`: two rows of a decision table one input matches, under hit policy `unique` or `any` (outputs differing).
 * - `TABLE_UNREACHABLE`: a row of a decision table no input reaches.
 * - `TABLE_GAP`: an input no row of a decision table matches, while `noMatch` is "fail".
 * - `TABLE_INCOMPLETE`: the analysis of a decision table stopped early, or an expression cell kept a question open.
 * - `MISSING_VALUE_MESSAGE`: `$value` in the message of a `required` rule, which shows as nothing when the field is missing.
 */
export type RuleWarningCode =
  | 'CONSTANT' | 'TYPE_MISMATCH' | 'UNKNOWN_FIELD' | 'BARE_NAME' | 'NEVER_EVALUATED' | 'NO_FOREACH'
  | 'TABLE_OVERLAP' | 'TABLE_UNREACHABLE' | 'TABLE_GAP' | 'TABLE_INCOMPLETE' | 'MISSING_VALUE_MESSAGE';

/** A place inside a rule's decision table: `table`, `table.rows`, `table.rows[12]`, `table.rows[12].when[2]`, `table.inputs[0].path`. */
export type TableWarningPath = 'table' | `table.${string}`;

/** The rule field a warning is about, or the place in its table. */
export type WarningPath = 'expression' | 'when' | 'fieldPath' | 'forEach' | 'message' | 'enabled' | TableWarningPath;

export interface RuleWarning {
  code: RuleWarningCode;
  path: WarningPath;
  message: string;
  /** 1-based, inside the field's text, as for compile errors. */
  line?: number;
  column?: number;
  /** Replacement text for what the warning points at (a path, a quoted string, an operation). */
  suggestion?: string;
  /** Table warnings: an input that shows the finding, as the payload fragment the table's inputs read. */
  witness?: Record<string, unknown>;
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

  /** A table's finding (table-analysis.ts), in the order the analysis gives them. */
  addTable(code: RuleWarningCode, path: TableWarningPath, message: string, witness?: Record<string, unknown>): void {
    const warning: RuleWarning = { code, path, message };
    if (witness !== undefined) warning.witness = witness;
    this.#warnings.push(warning);
  }

  /** The warnings ordered by field, then line and column; a table's last, in their own order. */
  list(): RuleWarning[] {
    const rank = (path: WarningPath): number => (path === 'table' || path.startsWith('table.') ? PATH_ORDER.length : PATH_ORDER.indexOf(path));
    const order = (w: RuleWarning): number[] => [rank(w.path), w.line ?? 0, w.column ?? 0];
    return [...this.#warnings].sort((a, b) => {
      const x = order(a);
      const y = order(b);
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
  }
}
