/**
 * The shape of a benchmark suite: a context's rules and the payloads they
 * are measured on, as plain data, so every engine reads the same input.
 */
import type { RuleDefinition } from '../../compiler/types.ts';

/** One rule context measured by the benchmarks. */
export interface BenchSuite {
  /** Short name used in tables and in the results file. */
  readonly name: string;
  /** The rule context these rules would be published under. */
  readonly context: string;
  /** The `now` every validation of the suite sees (epoch milliseconds). */
  readonly now: number;
  readonly rules: readonly RuleDefinition[];
  /** A payload that satisfies every rule, and one that breaks several. */
  readonly payloads: { readonly passing: unknown; readonly failing: unknown };
}
