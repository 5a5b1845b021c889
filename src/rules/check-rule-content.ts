/**
 * The save-time check of a rule (docs/rule-language.md: "saving compiles the rule").
 * What JSON Schema cannot say is checked here, then the compiler's own
 * checkRule runs; every problem becomes one `{ path, message }` entry of a
 * RuleInvalidError (a 400 over HTTP), so a publish never meets a rule that
 * cannot compile.
 */
import { checkRule, positionOf } from '../../compiler/index.ts';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import type { CompileError } from '../../compiler/types.ts';
import { RuleInvalidError, type FieldError } from '../domain-errors.ts';
import type { RuleContent } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { jsonDepthExceeds } from './json-depth.ts';

export interface RuleCheckOptions {
  /** MAX_EXPRESSION_LENGTH, applied to `expression` and `when`. */
  maxExpressionLength: number;
  /** Prefix of reported paths, e.g. `rule` for POST /rules/test. */
  pathPrefix?: string;
}

/**
 * The problems of a rule's content, [] when it would compile.
 *
 * @example
 * ruleContentErrors('LIMIT', { ...content, expression: 'new Date()' }, { maxExpressionLength: 4096 });
 * // [{ path: 'expression', message: 'line 1, column 1: `new` is not allowed' }]
 */
export function ruleContentErrors(code: string, content: RuleContent, options: RuleCheckOptions): FieldError[] {
  const at = (field: string): string => (options.pathPrefix === undefined ? field : `${options.pathPrefix}.${field}`);
  const errors: FieldError[] = [];

  if (content.expression === undefined && content.schema === undefined && !content.required) {
    errors.push({
      path: at('expression'),
      message: 'a rule needs at least one of `expression`, `schema` or `required: true`',
    });
  }
  for (const field of ['expression', 'when'] as const) {
    const text = content[field];
    if (text !== undefined && text.length > options.maxExpressionLength) {
      // Where the text goes past the limit, as every other refusal says where (docs/rule-language.md).
      const { line, column } = positionOf(text, options.maxExpressionLength);
      errors.push({
        path: at(field),
        message: `line ${line}, column ${column}: is ${text.length} characters long; at most ${options.maxExpressionLength} are allowed`,
      });
    }
  }
  const maxDepth = TUNING.maxExpectedValueDepth.value;
  if (content.expectedValue !== undefined && jsonDepthExceeds(content.expectedValue, maxDepth)) {
    errors.push({ path: at('expectedValue'), message: `is nested deeper than ${maxDepth} levels` });
  }
  // The compiler is only asked once the cheap checks pass: it would repeat
  // them with less precise wording, and an over-long text is not worth parsing.
  if (errors.length > 0) return errors;

  const compileErrors = checkRule(toRuleDefinition(code, content), {
    limits: { maxExpressionLength: options.maxExpressionLength },
  });
  return compileErrors.map((error) => ({ path: at(error.field), message: describeCompileError(error) }));
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

/** "line 1, column 7: `new` is not allowed"; the position only when the compiler gives one. */
export function describeCompileError(error: CompileError): string {
  if (error.line === undefined) return error.message;
  const column = error.column === undefined ? '' : `, column ${error.column}`;
  return `line ${error.line}${column}: ${error.message}`;
}
