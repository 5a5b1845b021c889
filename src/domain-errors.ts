/**
 * The refusals of the service's own modules (validators, rules): each a
 * class with a stable code that carries the facts of its situation, not the
 * words a client reads. Storage refuses with the errors of its contract
 * (storage/types.ts). The HTTP layer turns both into problems of the error
 * catalogue (http/problem-mapping.ts); nothing here knows about HTTP.
 */

/** One problem at a place in what a caller sent, in the rules' field-path syntax (`items[2].payload`). */
export interface FieldError {
  path: string;
  message: string;
}

/** An evaluation stopped at the evaluation deadline; `path` names the part of the request it evaluated. */
export class EvaluationTooLargeError extends Error {
  readonly code = 'EVALUATION_TOO_LARGE';

  constructor(readonly path: string, readonly deadlineMs: number, options?: ErrorOptions) {
    super(`the evaluation of ${path} took longer than ${deadlineMs} ms`, options);
    this.name = 'EvaluationTooLargeError';
  }
}

/** A payload failed rules more than `maxFailures` times in one validation. */
export class TooManyFailuresRefusal extends Error {
  readonly code = 'TOO_MANY_FAILURES';

  constructor(readonly path: string, readonly maxFailures: number, options?: ErrorOptions) {
    super(`${path} fails rules more than ${maxFailures} times in one validation`, options);
    this.name = 'TooManyFailuresRefusal';
  }
}

/** The failures of an answer would take more than `maxBytes` (MAX_ANSWER_BYTES). */
export class AnswerTooLargeError extends Error {
  readonly code = 'ANSWER_TOO_LARGE';

  constructor(readonly path: string, readonly maxBytes: number) {
    super(`the failures of ${path} would take more than ${maxBytes} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

/** A rule's content would not compile; `errors` names every problem. */
export class RuleInvalidError extends Error {
  readonly code = 'RULE_INVALID';

  constructor(readonly errors: FieldError[]) {
    super('the rule does not compile');
    this.name = 'RuleInvalidError';
  }
}

/** Stored tests of a context fail against the ruleset about to go live; `errors` names each (`tests[3]`). */
export class TestsFailedError extends Error {
  readonly code = 'TESTS_FAILED';

  constructor(readonly context: string, readonly errors: FieldError[]) {
    super(`${errors.length} stored test(s) of context "${context}" fail`);
    this.name = 'TestsFailedError';
  }
}

/** The ruleset of a context does not compile. */
export class RulesetInvalidError extends Error {
  readonly code = 'RULESET_INVALID';

  constructor(readonly context: string, readonly errors: FieldError[]) {
    super(`the ruleset of context "${context}" does not compile`);
    this.name = 'RulesetInvalidError';
  }
}

/** The ruleset of a context is over a limit of rulesets as a whole (its text, its regex patterns). */
export class RulesetOverLimitError extends Error {
  readonly code = 'RULESET_OVER_LIMIT';

  constructor(readonly context: string, readonly errors: FieldError[]) {
    super(`the ruleset of context "${context}" is over a limit`);
    this.name = 'RulesetOverLimitError';
  }
}

/** A payload schema that the schema policy refuses; `errors` say where. */
export class PayloadSchemaInvalidError extends Error {
  readonly code = 'PAYLOAD_SCHEMA_INVALID';

  constructor(readonly errors: FieldError[]) {
    super('the payload schema is invalid');
    this.name = 'PayloadSchemaInvalidError';
  }
}

/** The rule exists but has no decision table: CSV carries only rows, so there is nothing to read them into. */
export class RuleHasNoTableError extends Error {
  readonly code = 'RULE_HAS_NO_TABLE';

  constructor(readonly ruleId: string, readonly ruleCode: string) {
    super(`rule ${ruleCode} has no decision table`);
    this.name = 'RuleHasNoTableError';
  }
}

/** The CSV cannot be read as the table's rows; `errors` name each line (`line 3`). */
export class TableCsvInvalidError extends Error {
  readonly code = 'TABLE_CSV_INVALID';

  constructor(readonly errors: FieldError[]) {
    super('the CSV is invalid');
    this.name = 'TableCsvInvalidError';
  }
}
