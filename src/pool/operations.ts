/**
 * The heavy management operations that run on the management pool, as
 * their refusals name them (management-pool.ts `PoolOperation`).
 */
import type { PoolOperation } from './management-pool.ts';

export const OPERATIONS = {
  storedTestRun: { name: 'stored-test run', unit: 'test' },
  ruleTest: { name: 'rule test', unit: 'payload' },
  impactReport: { name: 'impact report', unit: 'sample', path: 'limit' },
} as const satisfies Record<string, PoolOperation>;
