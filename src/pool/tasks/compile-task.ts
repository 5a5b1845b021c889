/**
 * A ruleset compiled on a compile-lane thread for the main thread to
 * install (compile-lane.ts): the compiler runs here, and what goes back is
 * plain data, the generated code, its refs and its figures, or the
 * compile errors (validators/compile-validator.ts `buildValidator`).
 */
import type { CompilerLimits, RuleDefinition } from '../../../compiler/types.ts';
import { buildValidator, type ValidatorBuild } from '../../validators/compile-validator.ts';

export interface CompileInput {
  /** The ruleset's rules as JSON arrays, in order (compile-lane.ts `rulesAsJson`). */
  rulesJson: string[];
  limits: Partial<CompilerLimits>;
}

/**
 * Compiles the ruleset; its compile errors are part of the output, not a refusal.
 *
 * @example
 * const build = await runCompileTask({ rulesJson: [JSON.stringify(ruleset.rules)], limits: { maxExpressionLength: 4096 } });
 */
export function runCompileTask(input: CompileInput): Promise<ValidatorBuild> {
  const rules = input.rulesJson.flatMap((chunk) => JSON.parse(chunk) as RuleDefinition[]);
  return buildValidator({ rules }, input.limits);
}
