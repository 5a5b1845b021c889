/**
 * What importing a rules file does to a context's rules, matched by code
 * (docs/api.md, "Rules as files"): which rules it creates, which get a new
 * draft version, which are already the file's, and which it archives (with
 * `prune`), and whether the context stays within its rule limit. Pure: a
 * real import works it out in its transaction (storage/context-import.ts),
 * a dry run on a management thread (pool/tasks/import-dry-run-task.ts), so
 * both answer alike.
 */
import { contentEquals, normalizeContent } from './rule-content.ts';
import { LimitExceededError, type ImportPlan, type ImportResult, type RuleContent } from './types.ts';

/** A non-archived rule of the context with its latest content, as stored. */
export interface ContextRule {
  code: string;
  content: unknown;
}

export interface ImportChanges<R extends ContextRule> {
  create: ImportPlan['rules'];
  update: Array<{ rule: R; content: RuleContent }>;
  unchanged: string[];
  archive: R[];
}

/**
 * The file's rules against the context's, each list in the file's (or the
 * context's) order; a LimitExceededError when the context would have more
 * rules than it may.
 *
 * @example
 * importChanges('loans', [{ code: 'A', content }], plan, { prune: false, maxRulesPerContext: 5000 }).create; // [{ code: 'B', content }]
 */
export function importChanges<R extends ContextRule>(
  context: string, rules: readonly R[], plan: ImportPlan, options: { prune: boolean; maxRulesPerContext: number },
): ImportChanges<R> {
  const byCode = new Map(rules.map((rule) => [rule.code, rule]));
  const inFile = new Set(plan.rules.map((rule) => rule.code));
  const changes: ImportChanges<R> = { create: [], update: [], unchanged: [], archive: [] };
  for (const { code, content } of plan.rules) {
    const existing = byCode.get(code);
    const next = normalizeContent(content);
    if (existing === undefined) changes.create.push({ code, content: next });
    else if (contentEquals(normalizeContent(existing.content as RuleContent), next)) changes.unchanged.push(code);
    else changes.update.push({ rule: existing, content: next });
  }
  if (options.prune) changes.archive = rules.filter((rule) => !inFile.has(rule.code));

  // As creating a rule does: a file that adds no rule passes even where a lowered limit is exceeded.
  const total = rules.length - changes.archive.length + changes.create.length;
  if (changes.create.length > 0 && total > options.maxRulesPerContext) {
    throw new LimitExceededError(`importing would leave context "${context}" with ${total} rules, the maximum is ${options.maxRulesPerContext}`);
  }
  return changes;
}

/**
 * The answer's lists, by code and sorted, with the ruleset version.
 *
 * @example
 * importResult(changes, true, 3); // { dryRun: true, create: ['B'], update: [], archive: [], unchanged: ['A'], rulesetVersion: 3 }
 */
export function importResult(changes: ImportChanges<ContextRule>, dryRun: boolean, rulesetVersion: number | null): ImportResult {
  const codes = (list: Array<{ code: string }>): string[] => list.map((item) => item.code).sort();
  return {
    dryRun,
    create: codes(changes.create),
    update: changes.update.map((u) => u.rule.code).sort(),
    archive: codes(changes.archive),
    unchanged: changes.unchanged.sort(),
    rulesetVersion,
  };
}
