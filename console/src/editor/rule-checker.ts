/**
 * Checks the rule being edited with POST /rules/check as one types. The
 * expression and `when` editors both ask for the same rule: one request
 * answers both (the last body and its answer are kept), and an answer
 * older than the latest request is not reported.
 */
import type { RuleCheckResult } from '../api-types.ts';

export type CheckCall = (rule: Record<string, unknown>) => Promise<RuleCheckResult>;

export class RuleChecker {
  #lastBody = '';
  #lastAnswer: Promise<RuleCheckResult> | undefined;
  #latest = 0;

  constructor(
    private readonly call: CheckCall,
    /** Told of each answer to the latest request, with the rule it is about. */
    private readonly onResult: (result: RuleCheckResult, rule: Record<string, unknown>) => void,
  ) {}

  /** The check of `rule`, asked once for the same rule. */
  check(rule: Record<string, unknown>): Promise<RuleCheckResult> {
    const body = JSON.stringify(rule);
    if (body === this.#lastBody && this.#lastAnswer !== undefined) return this.#lastAnswer;
    const ticket = ++this.#latest;
    const answer = this.call(rule);
    this.#lastBody = body;
    this.#lastAnswer = answer;
    answer.then((result) => { if (ticket === this.#latest) this.onResult(result, rule); }, () => { this.#lastBody = ''; });
    return answer;
  }
}
