/**
 * Public types of the rule compiler. The compiler is pure: rules in,
 * JavaScript out. Nothing here performs I/O or imports from `src/`.
 */
import type { CostProfile } from './analysis/cost-pass.ts';
import type { GeneratedValidator } from './compile-ruleset.ts';

// A rule's content and what the compiler takes of it are derived from one
// schema (rule-schema.ts).
import type { RuleDefinition as RuleContentDefinition, Severity } from './rule-schema.ts';
export type { Severity };
export type { HitPolicy, NoMatch, TableDefinition, TableInput, TableRow } from './table/table-definition.ts';

/** What the compiler takes of a rule: its content (rule-schema.ts), a decision table (compiler/table/) included. */
export type RuleDefinition = RuleContentDefinition;

/** One failure record, keys in the order of the interface's section 2.1. */
export interface FailureRecord {
  ruleCode: string;
  ruleName: string;
  severity: Severity;
  message: string;
  errorCode: string;
  fieldPath: string;
  actualValue: unknown;
  expectedValue: unknown;
}

/** What a compiled validator returns: the single result less executionTimeMs. */
export interface ValidationResult {
  isValid: boolean;
  totalRulesEvaluated: number;
  failures: FailureRecord[];
}

/**
 * A compiled ruleset. `now` is epoch milliseconds, one value per HTTP
 * request (a batch shares it); it is what `now()` and `age()` see.
 * Never throws for any JSON payload, with one exception: a payload that
 * fails rules more than MAX_FAILURES_PER_VALIDATION times (runtime.ts)
 * ends the validation with a TooManyFailuresError.
 */
export type ValidatorFn = (payload: unknown, now: number) => ValidationResult;

/** Which field of a rule a compile error is about. */
export type RuleField =
  | 'code' | 'name' | 'expression' | 'when' | 'message' | 'schema'
  | 'fieldPath' | 'forEach' | 'required' | 'expectedValue' | 'priority' | 'severity'
  | 'errorCode' | 'enabled' | 'table';

/** A stable, upper-case code for each kind of compile error. */
export type CompileErrorCode =
  | 'SYNTAX_ERROR'        // acorn could not parse it, or trailing text
  | 'NOT_ALLOWED'         // a construct the allow-list of 3.1-3.4 does not name
  | 'UNKNOWN_FUNCTION'    // call of something not listed
  | 'BAD_ARGUMENTS'       // wrong arity or a non-literal where a literal is required
  | 'TOO_LONG'            // expression, pattern or template over its limit
  | 'TOO_DEEP'            // nesting or callback depth over its limit
  | 'UNSAFE_PATTERN'      // regex refused by the regex policy
  | 'INVALID_PATTERN'     // regex that does not compile
  | 'INVALID_PATH'        // fieldPath / forEach grammar (2.4) or forEach/[] mismatch
  | 'INVALID_SCHEMA'      // ajv refused the schema, or schema policy (no $id, $data, remote $ref, size, depth)
  | 'INVALID_RULE'        // the rule as a whole (e.g. none of expression/schema/required)
  | 'INVALID_TABLE'       // a decision table's shape: hit policy, inputs, outputs, a row's cell or output count
  | 'LIMIT_EXCEEDED';     // the ruleset as a whole: its text over MAX_RULESET_TEXT_LENGTH, or its regex patterns over MAX_CONTEXT_PATTERN_WEIGHT

export interface CompileError {
  ruleCode: string;
  field: RuleField;
  code: CompileErrorCode;
  /** Human-readable; names what was refused, e.g. "`new` is not allowed". */
  message: string;
  /** Where inside the field, for a table: `table.rows[12].when[2]`, `table.inputs[0].path`. */
  path?: string;
  /** 1-based line and column inside the field's text (a table: the cell's text), when the error has a position. */
  line?: number;
  column?: number;
}

/** Limits of docs/rule-language.md, declared in one place. */
export interface CompilerLimits {
  maxExpressionLength: number;   // 4096
  maxNestingDepth: number;       // 64
  maxCallbackDepth: number;      // 2
  maxPatternLength: number;      // 512
  maxTemplateLength: number;     // 2000
  maxSchemaBytes: number;        // 65536
  maxSchemaDepth: number;        // 32
  maxExpectedValueBytes: number; // 65536
  maxPathLength: number;         // 256
  maxPathSegments: number;       // 32
  maxTableRows: number;          // 10000
  maxTableCellLength: number;    // 1000
}

export interface CompileOptions {
  limits?: Partial<CompilerLimits>;
  /** How generated source becomes a function; `new Function` by default (see SourceEvaluator). */
  evaluate?: SourceEvaluator;
}

/**
 * Evaluates one generated factory expression (`(function (rt, refs) { ... })`)
 * in the realm's global scope and returns its value. The default is
 * `new Function`; a host may evaluate through its engine's own API instead,
 * for instance to keep each script and hand its compiled code to another
 * thread. It must return exactly what evaluating `source` returns.
 */
export type SourceEvaluator = (source: string) => unknown;

export interface CompiledRuleset {
  /** The generated validator. */
  validate: ValidatorFn;
  /** Readable generated JavaScript, served to admins. */
  source: string;
  /** Time spent compiling in milliseconds (fractional); a compile run in steps does not count the time between them. */
  compileMs: number;
  /** Rules compiled into the validator (enabled, without errors). */
  ruleCount: number;
  /**
   * What the validator's memory grows with: characters of its rules' text,
   * and the weight of their distinct regex patterns (regex/pattern-size.ts).
   */
  footprint: { textLength: number; patternWeight: number };
  /** Per-rule compile errors; rules with errors are left out of `validate`. */
  errors: CompileError[];
  /**
   * What the validator can cost per payload, by degree (analysis/cost-pass.ts):
   * the rules of weight `costProfile[d]` take at most that many times n^d
   * steps on a payload of size n. The service sets an evaluation deadline by it.
   */
  costProfile: CostProfile;
  /** The generated code as plain data, read back when called, for another thread to instantiate (compile-ruleset.ts). */
  generated(): GeneratedValidator;
}
