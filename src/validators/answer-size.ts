/**
 * A bound on the size of a validation answer (MAX_ANSWER_BYTES).
 *
 * Why: an answer holds one failure record per failure, and a failure
 * carries the payload's value (`actualValue`). A small request can ask for
 * an enormous answer: 50 rules with `forEach` over 4,000 elements of a
 * 32 KB payload answered 486 MB after 15 s, with 1.5 GB of resident
 * memory; a few such requests at once would end the process, and past
 * V8's longest string (about 512 MB) the answer was a 500. Likewise 100
 * rules that each report the same 1 MB value as `actualValue`.
 *
 * The answer's size is estimated from its failure records before it is
 * serialized: characters of every string (plus JSON's quotes, keys and
 * punctuation), digits of every number, nested values walked. It counts
 * characters, not UTF-8 bytes or escapes, so text outside ASCII or full of
 * control characters is sent larger than estimated (at most 6x, for
 * `\u0001`-style escapes). A value reported by many failures (the same
 * object) is walked once per answer.
 */
import type { TraceEntry } from '../../compiler/explain-ruleset.ts';
import type { FailureRecord } from '../../compiler/types.ts';
import { AnswerTooLargeError } from '../domain-errors.ts';

/** Which failure fields the answer carries: all of them (single validation, rule test) or ruleCode and message (batch, transaction). */
export type FailureForm = 'full' | 'short';

/** JSON of a record with empty strings and null values, without the nulls, plus the comma between records. */
const FULL_RECORD_OVERHEAD = JSON.stringify({
  ruleCode: '', ruleName: '', severity: '', message: '', errorCode: '', fieldPath: '', actualValue: null, expectedValue: null,
}).length - 2 * 'null'.length + 1;
const SHORT_RECORD_OVERHEAD = JSON.stringify({ ruleCode: '', message: '' }).length + 1;

/**
 * The estimated size of an answer's failures, added up as evaluations
 * finish, so that a batch stops at the item that crosses the bound.
 *
 * @example
 * const budget = new AnswerBudget(16 * 1024 * 1024, 'short');
 * if (!budget.add(result.failures)) throw answerTooLarge('items', budget.maxBytes);
 */
export class AnswerBudget {
  #bytes = 0;
  /** Sizes of objects and arrays already walked, by identity (made on first need). */
  #walked: Map<object, number> | undefined;

  constructor(readonly maxBytes: number, readonly form: FailureForm) {}

  /** The estimate so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Adds `failures` (and `extraBytes` for the rest of their item); false once the answer is over the bound. */
  add(failures: readonly FailureRecord[], extraBytes = 0): boolean {
    let bytes = extraBytes;
    if (this.form === 'short') {
      for (let i = 0; i < failures.length; i++) {
        const f = failures[i];
        bytes += SHORT_RECORD_OVERHEAD + f.ruleCode.length + f.message.length;
      }
    } else {
      for (let i = 0; i < failures.length; i++) {
        const f = failures[i];
        bytes += FULL_RECORD_OVERHEAD + f.ruleCode.length + f.ruleName.length + f.severity.length + f.message.length
          + f.errorCode.length + f.fieldPath.length + this.#sizeOf(f.actualValue) + this.#sizeOf(f.expectedValue);
        // Stop walking values once over: a million failures of one value need not all be measured.
        if (this.#bytes + bytes > this.maxBytes) break;
      }
    }
    this.#bytes += bytes;
    return this.#bytes <= this.maxBytes;
  }

  /** Characters of `value`'s JSON, walking containers (depth is bounded by the payload guard and the rule limits). */
  #sizeOf(value: unknown): number {
    switch (typeof value) {
      case 'string':
        return value.length + 2;
      case 'number':
        return String(value).length;
      case 'boolean':
        return value ? 4 : 5;
      case 'object':
        return value === null ? 4 : this.#containerSize(value);
      default:
        return 4;
    }
  }

  #containerSize(value: object): number {
    this.#walked ??= new Map();
    const known = this.#walked.get(value);
    if (known !== undefined) return known;
    // Brackets, and a comma after every member but the last.
    let size = 1;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) size += this.#sizeOf(value[i]) + 1;
    } else {
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) size += key.length + 4 + this.#sizeOf(record[key]);
    }
    if (size === 1) size = 2;
    this.#walked.set(value, size);
    return size;
  }
}

/**
 * The refusal of an answer over MAX_ANSWER_BYTES, naming the part of the
 * request (`payload`, `items`) that asks for it.
 */
export function answerTooLarge(path: string, maxBytes: number): AnswerTooLargeError {
  return new AnswerTooLargeError(path, maxBytes);
}

/**
 * Throws answerTooLarge when one evaluation's failures alone are over
 * `maxBytes` (single validation and rule test). Nothing to measure, and no
 * allocation, when the payload passed.
 */
export function assertAnswerFits(failures: readonly FailureRecord[], maxBytes: number, path: string): void {
  if (failures.length > 0 && !new AnswerBudget(maxBytes, 'full').add(failures)) throw answerTooLarge(path, maxBytes);
}

/**
 * An explained answer: its failures and its trace. A trace entry carries a
 * value and an expected value as a failure does (one per rule, whether it
 * failed or not), so each is measured as a failure record would be.
 */
export function assertExplainedAnswerFits(
  failures: readonly FailureRecord[],
  trace: readonly TraceEntry[],
  maxBytes: number,
  path: string,
): void {
  const budget = new AnswerBudget(maxBytes, 'full');
  const entries: FailureRecord[] = trace.map((entry) => ({
    ruleCode: entry.ruleCode, ruleName: '', severity: 'Info', message: '', errorCode: entry.reason ?? entry.outcome,
    fieldPath: entry.fieldPath, actualValue: entry.value ?? null, expectedValue: entry.expected ?? null,
  }));
  if (!budget.add(failures) || !budget.add(entries)) throw answerTooLarge(path, maxBytes);
}
