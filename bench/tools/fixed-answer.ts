/**
 * The answer of the HTTP baselines (bare-server.ts, floor-server.ts): a
 * passing single result of the loan context, fixed, so that what a
 * baseline costs is the HTTP work alone.
 */
export const FIXED_ANSWER = { isValid: true, totalRulesEvaluated: 20, failures: [], executionTimeMs: 0 } as const;
