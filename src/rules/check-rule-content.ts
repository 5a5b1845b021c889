/**
 * The save-time check of a rule (docs/rule-language.md: "saving compiles the rule").
 * What JSON Schema cannot say is checked here, then the compiler's own
 * checkRule runs; every problem becomes one `{ path, message }` entry of a
 * RuleInvalidError (a 400 over HTTP), so a publish never meets a rule that
 * cannot compile.
 */
import { checkRule, positionOf } from '../../compiler/index.ts';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import { RuleInvalidError, type FieldError } from '../domain-errors.ts';
import type { RuleContent } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { describeCompileError } from '../validators/compile-errors.ts';
import { jsonDepthExceeds } from './json-depth.ts';

export interface RuleCheckOptions {
  /** MAX_EXPRESSION_LENGTH, applied to `expression` and `when`. */
  maxExpressionLength: number;
  /** MAX_TABLE_ROWS, the most rows of a rule's decision table. */
  maxTableRows: number;
  /** Prefix of reported paths, e.g. `rule` for POST /rules/test. */
  pathPrefix?: string;
}

/**
 * One problem of a rule's content: the field, what is wrong, and where in
 * the field's text when the problem has a place (expressions, templates,
 * over-long text). POST /rules/check answers these as they are; saves
 * answer them as FieldErrors whose message starts with the place.
 */
export interface RuleProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * The problems of a rule's content, [] when it would compile.
 *
 * @example
 * ruleContentProblems('LIMIT', { ...content, expression: 'new Date()' }, { maxExpressionLength: 4096, maxTableRows: 10000 });
 * // [{ path: 'expression', message: '`new` is not allowed', line: 1, column: 1 }]
 */
export function ruleContentProblems(code: string, content: RuleContent, options: RuleCheckOptions): RuleProblem[] {
  const at = (field: string): string => (options.pathPrefix === undefined ? field : `${options.pathPrefix}.${field}`);
  const problems: RuleProblem[] = [];

  if (content.expression === undefined && content.schema === undefined && content.table === undefined && !content.required) {
    problems.push({
      path: at('expression'),
      message: 'a rule needs at least one of `expression`, `schema`, `table` or `required: true`',
    });
  }
  for (const field of ['expression', 'when'] as const) {
    const text = content[field];
    if (text !== undefined && text.length > options.maxExpressionLength) {
      // Where the text goes past the limit, as every other refusal says where (docs/rule-language.md).
      const { line, column } = positionOf(text, options.maxExpressionLength);
      problems.push({
        path: at(field),
        message: `is ${text.length} characters long; at most ${options.maxExpressionLength} are allowed`,
        line,
        column,
      });
    }
  }
  const maxDepth = TUNING.maxExpectedValueDepth.value;
  if (content.expectedValue !== undefined && jsonDepthExceeds(content.expectedValue, maxDepth)) {
    problems.push({ path: at('expectedValue'), message: `is nested deeper than ${maxDepth} levels` });
  }
  // The compiler is only asked once the cheap checks pass: it would repeat
  // them with less precise wording, and an over-long text is not worth parsing.
  if (problems.length > 0) return problems;

  const compileErrors = checkRule(toRuleDefinition(code, content), {
    limits: { maxExpressionLength: options.maxExpressionLength, maxTableRows: options.maxTableRows },
  });
  return compileErrors.map((error) => {
    // A table's errors name their place inside it (`table.rows[3].when[1]`), not just the field.
    const problem: RuleProblem = { path: at(error.path ?? error.field), message: error.message };
    if (error.line !== undefined) problem.line = error.line;
    if (error.column !== undefined) problem.column = error.column;
    return problem;
  });
}

/**
 * The problems of a rule's content as the FieldErrors of a 400, [] when it
 * would compile; the place, when there is one, leads the message.
 *
 * @example
 * ruleContentErrors('LIMIT', { ...content, expression: 'new Date()' }, { maxExpressionLength: 4096, maxTableRows: 10000 });
 * // [{ path: 'expression', message: 'line 1, column 1: `new` is not allowed' }]
 */
export function ruleContentErrors(code: string, content: RuleContent, options: RuleCheckOptions): FieldError[] {
  return ruleContentProblems(code, content, options).map((problem) => ({ path: problem.path, message: describeCompileError(problem) }));
}

/**
 * Throws RuleInvalidError naming every problem of the rule.
 */
export function assertRuleCompiles(code: string, content: RuleContent, options: RuleCheckOptions): void {
  const errors = ruleContentErrors(code, content, options);
  if (errors.length > 0) {
    throw new RuleInvalidError(errors);
  }
}

