/**
 * POST /rules/check (docs/api.md): what a save of a rule would say, without
 * saving it. The rule goes through every check a save makes (its shape,
 * text the database could not keep, the compiler) and the analysis behind
 * the warnings, against its context's payload schema. Every problem is
 * answered 200 with `ok: false`: an editor calls this on every keystroke,
 * and a rule half written is not a bad request.
 *
 * It costs one indexed read (the payload schema's revision) when the rule
 * names a context, and the rule's compile check, on a management thread
 * (src/pool/); nothing is compiled to code that runs, cached or stored.
 */
import { Ajv } from 'ajv';
import type { FastifyPluginAsync } from 'fastify';
import type { RuleWarning } from '../../compiler/index.ts';
import type { AppDeps } from '../app-deps.ts';
import { schemaErrorsToFieldErrors } from '../http/schema-errors.ts';
import { findUnstorableText } from '../http/storable-text.ts';
import { operation } from '../openapi/operation.ts';
import { OPERATIONS } from '../pool/operations.ts';
import type { RuleProblem } from '../rules/check-rule-content.ts';
import { warningsFor } from '../rules/rule-warnings.ts';
import { tenantOf } from './schemas/route-helpers.ts';
import { toRuleContent, type TestRuleBody } from '../rules/rule-body.ts';
import { checkedRuleSchema, ruleCheckBodySchema } from './schemas/rule-check-schemas.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

/** An error of the answer: always placed, at the start of the field when the problem has no place of its own. */
interface PlacedProblem {
  path: string;
  message: string;
  line: number;
  column: number;
}

interface CheckAnswer {
  ok: boolean;
  errors: PlacedProblem[];
  warnings: RuleWarning[];
}

// The same options as the app's own request validation (app.ts), so a rule
// this accepts is one POST /rules accepts.
const isRule = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: false })
  .compile<TestRuleBody>(checkedRuleSchema);

function placed(problem: RuleProblem): PlacedProblem {
  return { path: problem.path, message: problem.message, line: problem.line ?? 1, column: problem.column ?? 1 };
}

/**
 * Registers POST /rules/check. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(ruleCheckRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const ruleCheckRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { config } = deps;
  const warningSources = { payloadSchemas: deps.payloadSchemas, maxExpressionLength: config.maxExpressionLength };

  app.post<{ Body: { rule: Record<string, unknown> } }>('/rules/check', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'checkRule',
        tag: 'Rules',
        summary: 'Check a rule without saving it',
        description: 'Checks a rule as POST /rules would (code uniqueness aside) and stores nothing: the errors a save would refuse it for, '
          + 'each with its field, line and column, and the warnings it would be saved with, against the payload schema of the rule\'s `context`. '
          + 'Errors are answered 200 with `ok: false`, so an editor can call this on every keystroke.',
        answers: {
          200: 'What a save would say: `ok`, `errors` and `warnings`.',
          409: 'The check stopped at its time or memory budget (LIMIT_EXCEEDED).',
          429: 'The tenant already has its most heavy management operations waiting or running, or this one waited its whole time budget for a '
            + 'thread behind them (RATE_LIMITED, with Retry-After).',
          503: 'No management thread was free within the check\'s time budget, other tenants\' work holding them (SERVICE_UNAVAILABLE, with Retry-After).',
        },
      }),
      body: ruleCheckBodySchema,
      response: { 200: sharedRef('RuleCheckResult') },
    },
  }, async (request): Promise<CheckAnswer> => {
    const tenantId = tenantOf(request);
    const { rule } = request.body;
    if (!isRule(rule)) {
      const errors = schemaErrorsToFieldErrors(isRule.errors ?? []).map(placed);
      return { ok: false, errors, warnings: [] };
    }
    const unstorable = findUnstorableText(rule);
    if (unstorable !== undefined) return { ok: false, errors: [placed(unstorable)], warnings: [] };

    const content = toRuleContent(rule);
    if (content.table !== undefined) {
      // A decision table's analysis grows with its rows: its warnings are worked out on the thread too.
      const review = await deps.pool.operation(tenantId, OPERATIONS.ruleReview, async (run) => {
        const stored = rule.context === undefined ? null : await deps.storage.payloadSchemas.get(tenantId, rule.context);
        return run('ruleReview', {
          code: rule.code, content, maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows,
          check: true, payloadSchema: stored?.schema ?? null,
        });
      });
      return { ok: review.problems.length === 0, errors: review.problems.map(placed), warnings: review.warnings };
    }
    // Compiling a rule's schema or expressions is a heavy operation's work: on a management thread.
    const problems = await deps.pool.operation(tenantId, OPERATIONS.ruleCheck, (run) => run('ruleCheck', {
      code: rule.code, content, maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows,
    }));
    const errors = problems.map(placed);
    // Warnings of the fields that do compile are worth showing beside the errors of those that do not.
    const warnings = await warningsFor(warningSources, tenantId, rule.context, rule.code, content);
    return { ok: errors.length === 0, errors, warnings };
  });
};
