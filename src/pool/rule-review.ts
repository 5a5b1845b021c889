/**
 * A rule's save-time review, wherever it is cheapest to run without
 * blocking validations: whether it compiles (a save refuses it otherwise)
 * and the warnings it is answered with. A rule with a decision table is
 * reviewed on a management thread, as a heavy operation of its tenant:
 * its compile and its analysis grow with its rows (a 10,000-row table
 * takes a few hundred milliseconds). Any other rule is reviewed on the
 * event loop, where it takes microseconds (its expressions are bounded by
 * MAX_EXPRESSION_LENGTH).
 */
import type { Config } from '../config.ts';
import { RuleInvalidError } from '../domain-errors.ts';
import { assertRuleCompiles } from '../rules/check-rule-content.ts';
import { describeCompileError } from '../validators/compile-errors.ts';
import type { PayloadSchemas } from '../rules/payload-schemas.ts';
import { warningsFor, type RuleWarning } from '../rules/rule-warnings.ts';
import type { PayloadSchemaStore, Rule, RuleContent } from '../storage/types.ts';
import type { ManagementPool } from './management-pool.ts';
import { OPERATIONS } from './operations.ts';
import type { RuleReviewOutput } from './tasks/rule-review-task.ts';

export interface RuleReviewSources {
  config: Pick<Config, 'maxExpressionLength' | 'maxTableRows'>;
  pool: ManagementPool;
  payloadSchemas: PayloadSchemas;
  storedPayloadSchemas: PayloadSchemaStore;
}

export interface RuleReviewer {
  /** Throws RuleInvalidError naming every problem that keeps the rule from compiling; `pathPrefix` leads each path (`rule`). */
  assertCompiles(tenantId: string, code: string, content: RuleContent, pathPrefix?: string): Promise<void>;
  /** The warnings of a rule's content in a context (its payload schema's). */
  warningsFor(tenantId: string, context: string | undefined, code: string, content: RuleContent): Promise<RuleWarning[]>;
  /** The rule as the rule routes answer it: with its warnings. */
  withWarnings(tenantId: string, rule: Rule): Promise<Rule & { warnings: RuleWarning[] }>;
}

/**
 * @example
 * const review = ruleReviewer({ config, pool, payloadSchemas, storedPayloadSchemas: storage.payloadSchemas });
 * await review.assertCompiles('acme', 'LIMIT', content);
 */
export function ruleReviewer(sources: RuleReviewSources): RuleReviewer {
  const { config, pool } = sources;
  const checkOptions = { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows };
  const warningSources = { payloadSchemas: sources.payloadSchemas, maxExpressionLength: config.maxExpressionLength };

  const onThread = async (tenantId: string, context: string | undefined, code: string, content: RuleContent, check: boolean)
  : Promise<RuleReviewOutput> => {
    return pool.operation(tenantId, OPERATIONS.ruleReview, async (run) => {
      const stored = context === undefined ? null : await sources.storedPayloadSchemas.get(tenantId, context);
      return run('ruleReview', { code, content, ...checkOptions, check, payloadSchema: stored?.schema ?? null });
    });
  };

  const reviewer: RuleReviewer = {
    async assertCompiles(tenantId, code, content, pathPrefix) {
      if (content.table === undefined) {
        assertRuleCompiles(code, content, { ...checkOptions, pathPrefix });
        return;
      }
      const { problems } = await onThread(tenantId, undefined, code, content, true);
      if (problems.length > 0) {
        const placed = (path: string) => (pathPrefix === undefined ? path : `${pathPrefix}.${path}`);
        throw new RuleInvalidError(problems.map((problem) => ({ path: placed(problem.path), message: describeCompileError(problem) })));
      }
    },
    async warningsFor(tenantId, context, code, content) {
      if (content.table === undefined) return warningsFor(warningSources, tenantId, context, code, content);
      return (await onThread(tenantId, context, code, content, false)).warnings;
    },
    async withWarnings(tenantId, rule) {
      return { ...rule, warnings: await reviewer.warningsFor(tenantId, rule.context, rule.code, rule) };
    },
  };
  return reviewer;
}
