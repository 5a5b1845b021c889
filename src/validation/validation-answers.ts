/**
 * The bodies of the validation answers (docs/api.md) and
 * of a rule test, as the response schemas (schemas/result-schemas.ts)
 * serialize them.
 *
 * `executionTimeMs` is "the whole server-side handling time" (docs/api.md
 * 6), so it is read as late as a body can read it: a getter, called when
 * the serializer reaches the field. It is the last field of every schema
 * that has it, and fast-json-stringify reads each property once, in schema
 * order, so the figure covers serializing everything before it. For a
 * large batch that is much of the handling time: read before
 * serialization, a 400 KB answer reported 15 ms where its Server-Timing
 * (taken after serialization) said 44.
 *
 * The getter lives on the prototype, where JSON.stringify does not look:
 * these bodies are for the response schemas' serializers only.
 */
import { performance } from 'node:perf_hooks';
import type { RuleWarning, TraceEntry } from '../../compiler/index.ts';
import type { FailureRecord } from '../../compiler/types.ts';

/** A body whose `executionTimeMs` counts from `startedAt` (performance.now()) to the moment it is read. */
abstract class TimedAnswer {
  readonly #startedAt: number;

  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }

  /** Whole milliseconds since the request arrived, as of this read. */
  get executionTimeMs(): number {
    return Math.round(performance.now() - this.#startedAt);
  }
}

/** A single validation's (or a rule test's) answer. */
export class SingleAnswer extends TimedAnswer {
  constructor(
    readonly isValid: boolean,
    readonly totalRulesEvaluated: number,
    readonly failures: readonly FailureRecord[],
    startedAt: number,
  ) {
    super(startedAt);
  }
}

/** A rule test's answer: a single validation's, with the tested rule's warnings (empty when a context was tested). */
export class RuleTestAnswer extends SingleAnswer {
  constructor(
    isValid: boolean,
    totalRulesEvaluated: number,
    failures: readonly FailureRecord[],
    readonly warnings: readonly RuleWarning[],
    startedAt: number,
  ) {
    super(isValid, totalRulesEvaluated, failures, startedAt);
  }

  /** Set when the test was explained (`explain: true`); absent otherwise. */
  trace?: readonly TraceEntry[];
}

/** One item of a batch answer. */
export interface BatchItemResult {
  id: string;
  isValid: boolean;
  failures: readonly FailureRecord[];
}

/** A batch's answer. */
export class BatchAnswer extends TimedAnswer {
  constructor(
    readonly results: BatchItemResult[],
    readonly totalProcessed: number,
    readonly totalFailed: number,
    startedAt: number,
  ) {
    super(startedAt);
  }
}

/** One context of a transaction answer. */
export interface ContextResult {
  context: string;
  isValid: boolean;
  failures: readonly FailureRecord[];
}

/** A transaction's answer. */
export class TransactionAnswer extends TimedAnswer {
  constructor(
    readonly transactionId: string,
    readonly overallResult: 'Approved' | 'Rejected',
    readonly contextResults: ContextResult[],
    startedAt: number,
  ) {
    super(startedAt);
  }
}
