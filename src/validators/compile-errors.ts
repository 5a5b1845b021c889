/**
 * A compiler's errors as the API and the CLI word them. Every place that
 * compiles a whole ruleset (publish, the validator cache, a rule test, a
 * stored-test run, an impact report, the CLI) reports its errors through
 * rulesetCompileErrors, so each names the same place the save-time check
 * names (`table.rows[12].when[2]`, not just `table`).
 */
import type { CompileError } from '../../compiler/types.ts';
import type { FieldError } from '../domain-errors.ts';

/** "line 1, column 7: `new` is not allowed"; the position only when the compiler gives one. */
export function describeCompileError(error: Pick<CompileError, 'message' | 'line' | 'column'>): string {
  if (error.line === undefined) return error.message;
  const column = error.column === undefined ? '' : `, column ${error.column}`;
  return `line ${error.line}${column}: ${error.message}`;
}

/**
 * A ruleset's compile errors as FieldErrors: the path is the place inside
 * the rule (the table's cell or rows when there is one, else the field),
 * after `pathPrefix`; the message names the rule.
 *
 * @example
 * rulesetCompileErrors([{ ruleCode: 'LIMITS', field: 'table', path: 'table.rows', code: 'LIMIT_EXCEEDED', message: 'table.rows: 3 rows' }]);
 * // [{ path: 'table.rows', message: 'rule LIMITS: table.rows: 3 rows' }]
 */
export function rulesetCompileErrors(errors: readonly CompileError[], pathPrefix = ''): FieldError[] {
  return errors.map((error) => ({
    path: `${pathPrefix}${error.path ?? error.field}`,
    message: `rule ${error.ruleCode}: ${describeCompileError(error)}`,
  }));
}
