/**
 * From a live ruleset to a CompiledValidator: one call into the compiler,
 * plus the bookkeeping fields the management API reports.
 */
import { compileRuleset } from '../../compiler/index.ts';
import type { CompileError, CompilerLimits } from '../../compiler/types.ts';
import type { CompiledValidator } from '../app-deps.ts';
import type { LiveRuleset } from '../storage/types.ts';
import { costProfileOf } from './evaluation-cost.ts';

/** What a compile produced: a validator, or the reasons there is none. */
export interface CompileOutcome {
  validator?: CompiledValidator;
  errors: CompileError[];
}

/**
 * Compiles a ruleset. A ruleset with any compile error yields no validator:
 * leaving a broken rule out silently would validate payloads against less
 * than what was published.
 */
export function compileValidator(ruleset: LiveRuleset, limits: Partial<CompilerLimits>): CompileOutcome {
  const compiled = compileRuleset(ruleset.rules, { limits });
  if (compiled.errors.length > 0) return { errors: compiled.errors };
  const validator: CompiledValidator = Object.freeze({
    tenantId: ruleset.tenantId,
    context: ruleset.context,
    rulesetVersion: ruleset.rulesetVersion,
    validate: compiled.validate,
    // A getter, as in the compiler: read when an admin asks, not kept as a copy.
    get source() {
      return compiled.source;
    },
    ruleCount: compiled.ruleCount,
    compileMs: compiled.compileMs,
    compiledAt: new Date().toISOString(),
    ruleset,
  });
  // Worked out here, on publish, so that no request pays for it.
  costProfileOf(validator);
  return { errors: [], validator };
}
