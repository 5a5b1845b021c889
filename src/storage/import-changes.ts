/**
 * What importing a rules file does to a context's rules, matched by code
 * (docs/api.md, "Rules as files"): which rules it creates, which get a new
 * draft version, which are already the file's, and which it archives (with
 * `prune`), and whether the context stays within its rule limit. Pure: a
 * real import works it out in its transaction (storage/context-import.ts),
 * a dry run on a management thread (pool/tasks/import-dry-run-task.ts), so
 * both answer alike.
 */
import { createHash } from 'node:crypto';
import { contentEquals, normalizeContent } from './rule-content.ts';
import { LimitExceededError, type ImportPlan, type ImportResult, type ImportWrites, type RuleContent } from './types.ts';

/** A non-archived rule of the context with its latest content, as stored. */
export interface ContextRule {
  code: string;
  content: unknown;
}

/** A rule as a real import compares with it: which rule, and which of its versions the content is. */
export interface RuleHead {
  id: string;
  version: number;
  code: string;
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

/**
 * What the changes write, each content as its JSON text.
 *
 * @example
 * importWrites(changes).update; // [{ id: '…', version: 3, contentJson: '{"name":"Limit",…}' }]
 */
export function importWrites(changes: ImportChanges<ContextRule & RuleHead>): ImportWrites {
  return {
    create: changes.create.map(({ code, content }) => ({ code, contentJson: JSON.stringify(content) })),
    update: changes.update.map(({ rule, content }) => ({ id: rule.id, version: rule.version, contentJson: JSON.stringify(content) })),
    archive: changes.archive.map(({ id }) => ({ id })),
  };
}

/**
 * Which rules a comparison was made with: equal digests, the same rules at
 * the same versions under the same codes, whose contents are therefore the
 * same (a rule version is never changed). In any order.
 *
 * @example
 * importBaseDigest([{ id: 'a1…', version: 2, code: 'LIMIT' }]); // 'e3b0…' (hex SHA-256)
 */
export function importBaseDigest(rules: readonly RuleHead[]): string {
  const hash = createHash('sha256');
  for (const { id, version, code } of [...rules].sort((a, b) => (a.id < b.id ? -1 : 1))) hash.update(`${id} ${version} ${JSON.stringify(code)}\n`);
  return hash.digest('hex');
}
