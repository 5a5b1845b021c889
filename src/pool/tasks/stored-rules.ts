/**
 * Rules and stored tests as the database gave them, as JSON text
 * (storage/context-rulesets.ts `loadRulesText`, context-test-store.ts
 * `listText`), read on the management thread that uses them: a context of
 * thousands of rules and hundreds of tests is megabytes, which the event
 * loop would otherwise parse, walk into definitions and copy to the thread
 * (tens of milliseconds in one piece). Parsed with JSON.parse, as the
 * database driver parses a json column, so the objects are the same.
 */
import { toRuleDefinition, type RuleContent } from '../../../compiler/rule-schema.ts';
import type { LiveRuleset, RulesetText, StoredTest } from '../../storage/types.ts';

/** A rule of the context as stored: its code and its content. */
export interface StoredRule {
  code: string;
  content: RuleContent;
}

/** The rules of a `rulesJson` text, in its order (by code). */
export function storedRulesOf(rulesJson: string): StoredRule[] {
  return JSON.parse(rulesJson) as StoredRule[];
}

/**
 * The ruleset as the compiler takes it; one already built is taken as it is.
 *
 * @example
 * rulesetOf({ tenantId: 'acme', context: 'loans', rulesetVersion: 3, rulesJson: '[{"code":"A","content":{...}}]' }).rules; // [{ code: 'A', ... }]
 */
export function rulesetOf(ruleset: LiveRuleset | RulesetText): LiveRuleset {
  if (!('rulesJson' in ruleset)) return ruleset;
  const { rulesJson, ...rest } = ruleset;
  return { ...rest, rules: storedRulesOf(rulesJson).map((rule) => toRuleDefinition(rule.code, rule.content)) };
}

/** The stored tests, from their JSON text or as they are. */
export function storedTestsOf(tests: StoredTest[] | string): StoredTest[] {
  return typeof tests === 'string' ? JSON.parse(tests) as StoredTest[] : tests;
}
