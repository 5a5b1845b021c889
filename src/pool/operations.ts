/**
 * The heavy management operations that run on the management pool, as
 * their refusals name them (management-pool.ts `PoolOperation`).
 */
import type { PoolOperation } from './management-pool.ts';

export const OPERATIONS = {
  storedTestRun: { name: 'stored-test run', unit: 'test' },
  ruleTest: { name: 'rule test', unit: 'payload' },
  impactReport: { name: 'impact report', unit: 'sample', path: 'limit' },
  goLiveTests: { name: 'stored-test run before going live', unit: 'test' },
  ruleCheck: { name: 'rule check', unit: 'rule', before: 'while compiling the rule' },
  ruleReview: { name: 'decision-table rule review', unit: 'rule', before: 'while checking the table' },
  importCheck: { name: 'import', unit: 'rule', before: 'while checking the file\'s rules' },
  diff: { name: 'diff', unit: 'rule', before: 'while comparing the rulesets' },
} as const satisfies Record<string, PoolOperation>;
