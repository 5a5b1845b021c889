/**
 * A rule's decision table checked and normalized for code generation:
 * inputs (paths parsed, expressions lowered), outputs, every cell parsed
 * (cell-test.ts; expression cells lowered with `$cell`), outputs checked as
 * JSON, and the index chosen for the table's shape (table-strategy.ts).
 * Every problem is a CompileError on the field `table` whose `path` names
 * the place, `table.rows[12].when[2]`, with the column inside the cell.
 */
import type { CompileError, CompileErrorCode, CompilerLimits } from '../types.ts';
import { compileExpression } from '../expression/compile-expression.ts';
import { identity, type ExpressionError } from '../expression/errors.ts';
import { rootsOf } from '../expression/generate.ts';
import type { Expr, RootName } from '../expression/ir.ts';
import type { PatternResult } from '../expression/lower.ts';
import { jsonOf } from '../json-value.ts';
import { MAX_RULESET_TEXT_LENGTH, MAX_TABLE_INPUTS, MAX_TABLE_OUTPUTS } from '../limits.ts';
import { isPathError, parsePath, type PathSegment } from '../paths.ts';
import { parseCell, type CellTest } from './cell-test.ts';
import { HIT_POLICIES, type HitPolicy } from './table-definition.ts';
import { chooseStrategy, type TableStrategy } from './table-strategy.ts';

export interface TableInputPlan {
  name: string;
  /** The payload path read, as written and parsed. */
  path?: { text: string; segments: PathSegment[] };
  expression?: Expr;
}

export interface TablePlan {
  hitPolicy: HitPolicy;
  inputs: TableInputPlan[];
  outputs: string[];
  /** Per row, one test per input. */
  cells: CellTest[][];
  /** Per row, one JSON value per output. */
  then: unknown[][];
  noMatch: 'fail' | 'pass' | { then: unknown[] };
  /** The expression cells' IR, by their `id`. */
  expressionCells: Expr[];
  strategy: TableStrategy;
}

/** Output names are read as `$row.name`: plain names, never one that would reach a prototype. */
const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_INPUT_NAME_LENGTH = 100;
/** A table with every cell wrong would report thousands; the first ones are enough to act on. */
const MAX_TABLE_ERRORS = 20;
/** Names a cell's expression cannot see: it runs once per cell, apart from the rule's value and loop. */
const NOT_IN_CELLS: ReadonlySet<RootName> = new Set(['value', 'item', 'index', 'expected']);

export interface TablePlanOptions {
  ruleCode: string;
  limits: CompilerLimits;
  /** The regex policy of one field (rule-plan.ts), for `matches()` in input and cell expressions. */
  compilePattern: () => (pattern: string) => PatternResult;
}

class TooManyErrors extends Error {}

/**
 * Checks a rule's `table` and returns its plan, or its errors (never both).
 *
 * @example
 * planTable({ hitPolicy: 'first', inputs: [{ name: 'c', path: 'country' }], rows: [{ when: ['"US"'] }] }, options);
 */
export function planTable(table: unknown, options: TablePlanOptions): { ok: true; plan: TablePlan } | { ok: false; errors: CompileError[] } {
  const errors: CompileError[] = [];
  const fail = (path: string, code: CompileErrorCode, message: string, position?: { line?: number; column?: number }): void => {
    errors.push({ ruleCode: options.ruleCode, field: 'table', code, message: `${path}: ${message}`, path, ...position });
    if (errors.length >= MAX_TABLE_ERRORS) throw new TooManyErrors();
  };
  try {
    const plan = new TablePlanner(options, fail).plan(table);
    return errors.length === 0 && plan !== undefined ? { ok: true, plan } : { ok: false, errors };
  } catch (err) {
    if (!(err instanceof TooManyErrors)) throw err;
    errors.push({
      ruleCode: options.ruleCode,
      field: 'table',
      code: 'INVALID_TABLE',
      message: `table: stopped after ${MAX_TABLE_ERRORS} errors; correct these and save again`,
      path: 'table',
    });
    return { ok: false, errors };
  }
}

type Fail = (path: string, code: CompileErrorCode, message: string, position?: { line?: number; column?: number }) => void;

class TablePlanner {
  readonly #options: TablePlanOptions;
  readonly #fail: Fail;
  readonly #expressionCells: Expr[] = [];
  /** Cells already read, by text: tables repeat a few texts in many rows, and a text reads the same everywhere. */
  readonly #read = new Map<string, CellTest>();

  constructor(options: TablePlanOptions, fail: Fail) {
    this.#options = options;
    this.#fail = fail;
  }

  plan(table: unknown): TablePlan | undefined {
    const fail = this.#fail;
    if (!isRecord(table)) {
      fail('table', 'INVALID_TABLE', 'a table must be an object with hitPolicy, inputs and rows');
      return undefined;
    }
    for (const key of Object.keys(table)) {
      if (!['hitPolicy', 'inputs', 'outputs', 'rows', 'noMatch'].includes(key)) {
        fail(`table.${key}`, 'INVALID_TABLE', 'unknown property: a table has hitPolicy, inputs, outputs, rows and noMatch');
      }
    }
    const hitPolicy = table.hitPolicy;
    if (typeof hitPolicy !== 'string' || !(HIT_POLICIES as readonly string[]).includes(hitPolicy)) {
      fail('table.hitPolicy', 'INVALID_TABLE', `unknown hit policy ${JSON.stringify(hitPolicy) ?? 'undefined'}: it is one of ${HIT_POLICIES.join(', ')}`);
    }
    const outputs = this.outputs(table.outputs);
    const inputs = this.inputs(table.inputs, outputs);
    const noMatch = this.noMatch(table.noMatch, outputs);
    const rows = this.rows(table.rows, inputs?.length, outputs);
    if (inputs === undefined || rows === undefined || noMatch === undefined || outputs === undefined) return undefined;
    const policy = hitPolicy as HitPolicy;
    return {
      hitPolicy: policy,
      inputs,
      outputs,
      cells: rows.cells,
      then: rows.then,
      noMatch,
      expressionCells: this.#expressionCells,
      strategy: chooseStrategy(rows.cells),
    };
  }

  outputs(value: unknown): string[] | undefined {
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.#fail('table.outputs', 'INVALID_TABLE', 'outputs must be an array of names');
      return undefined;
    }
    if (value.length > MAX_TABLE_OUTPUTS) {
      this.#fail('table.outputs', 'LIMIT_EXCEEDED', `a table has at most ${MAX_TABLE_OUTPUTS} outputs, this one has ${value.length}`);
      return undefined;
    }
    let ok = true;
    value.forEach((name, i) => {
      if (typeof name !== 'string' || !OUTPUT_NAME.test(name) || name === '__proto__') {
        this.#fail(`table.outputs[${i}]`, 'INVALID_TABLE', 'an output name is 1-64 characters of A-Z, a-z, 0-9 and _, not starting with a digit (it is read as $row.name)');
        ok = false;
      } else if (value.indexOf(name) !== i) {
        this.#fail(`table.outputs[${i}]`, 'INVALID_TABLE', `the output ${JSON.stringify(name)} is named twice`);
        ok = false;
      }
    });
    return ok ? value as string[] : undefined;
  }

  inputs(value: unknown, outputs: string[] | undefined): TableInputPlan[] | undefined {
    const fail = this.#fail;
    if (!Array.isArray(value) || value.length === 0) {
      fail('table.inputs', 'INVALID_TABLE', 'inputs must be a non-empty array of { name, path } or { name, expression }');
      return undefined;
    }
    if (value.length > MAX_TABLE_INPUTS) {
      fail('table.inputs', 'LIMIT_EXCEEDED', `a table has at most ${MAX_TABLE_INPUTS} inputs, this one has ${value.length}`);
      return undefined;
    }
    const plans: TableInputPlan[] = [];
    const names = new Set<string>(outputs ?? []);
    let ok = true;
    value.forEach((input, i) => {
      const at = `table.inputs[${i}]`;
      if (!isRecord(input)) {
        fail(at, 'INVALID_TABLE', 'an input is { name, path } or { name, expression }');
        ok = false;
        return;
      }
      const { name, path, expression } = input;
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_INPUT_NAME_LENGTH) {
        fail(`${at}.name`, 'INVALID_TABLE', `an input's name is 1-${MAX_INPUT_NAME_LENGTH} characters`);
        ok = false;
        return;
      }
      if (names.has(name)) {
        fail(`${at}.name`, 'INVALID_TABLE', `the name ${JSON.stringify(name)} is used twice among the inputs and outputs`);
        ok = false;
      }
      names.add(name);
      if ((path === undefined) === (expression === undefined)) {
        fail(at, 'INVALID_TABLE', 'an input has exactly one of path and expression');
        ok = false;
        return;
      }
      const planned = path !== undefined ? this.inputPath(path, `${at}.path`) : this.inputExpression(expression, `${at}.expression`);
      if (planned === undefined) ok = false;
      else plans.push({ name, ...planned });
    });
    return ok ? plans : undefined;
  }

  inputPath(text: unknown, at: string): Pick<TableInputPlan, 'path'> | undefined {
    if (typeof text !== 'string') {
      this.#fail(at, 'INVALID_PATH', 'a path must be a string');
      return undefined;
    }
    const parsed = parsePath(text, this.#options.limits);
    if (isPathError(parsed)) {
      this.#fail(at, 'INVALID_PATH', parsed.message, parsed.column === undefined ? undefined : { line: 1, column: parsed.column });
      return undefined;
    }
    if (parsed.some((s) => 'each' in s)) {
      this.#fail(at, 'INVALID_PATH', 'an input path cannot contain `[]`: use an expression such as items.map(x => x.qty)');
      return undefined;
    }
    return { path: { text, segments: parsed } };
  }

  inputExpression(text: unknown, at: string): Pick<TableInputPlan, 'expression'> | undefined {
    if (typeof text !== 'string') {
      this.#fail(at, 'SYNTAX_ERROR', 'an expression must be a string');
      return undefined;
    }
    const compiled = compileExpression(text, this.#options.limits, { compilePattern: this.#options.compilePattern(), map: identity }, 'input expression');
    if (!compiled.ok) {
      this.#expressionError(at, compiled.error);
      return undefined;
    }
    return { expression: compiled.expr };
  }

  noMatch(value: unknown, outputs: string[] | undefined): TablePlan['noMatch'] | undefined {
    if (value === undefined || value === 'fail' || value === 'pass') return value ?? 'fail';
    if (isRecord(value) && Object.keys(value).length === 1 && Array.isArray(value.then)) {
      const then = this.outcome(value.then, outputs, 'table.noMatch.then');
      return then === undefined ? undefined : { then };
    }
    this.#fail('table.noMatch', 'INVALID_TABLE', 'noMatch is "fail", "pass" or { "then": [ ...one value per output ] }');
    return undefined;
  }

  rows(value: unknown, inputCount: number | undefined, outputs: string[] | undefined): { cells: CellTest[][]; then: unknown[][] } | undefined {
    const fail = this.#fail;
    const limits = this.#options.limits;
    if (!Array.isArray(value)) {
      fail('table.rows', 'INVALID_TABLE', 'rows must be an array of { when: [cells], then: [outputs] }');
      return undefined;
    }
    if (value.length > limits.maxTableRows) {
      fail('table.rows', 'LIMIT_EXCEEDED', `a table has at most ${limits.maxTableRows} rows, this one has ${value.length}`);
      return undefined;
    }
    const cells: CellTest[][] = [];
    const then: unknown[][] = [];
    let text = 0;
    let ok = true;
    for (let r = 0; r < value.length; r++) {
      const row: unknown = value[r];
      const at = `table.rows[${r}]`;
      if (!isRecord(row) || !Array.isArray(row.when)) {
        fail(at, 'INVALID_TABLE', 'a row is { when: [one cell per input], then: [one value per output] }');
        ok = false;
        continue;
      }
      if (inputCount !== undefined && row.when.length !== inputCount) {
        fail(`${at}.when`, 'INVALID_TABLE', `the row has ${row.when.length} cells; the table has ${inputCount} inputs`);
        ok = false;
        continue;
      }
      const tests: CellTest[] = [];
      row.when.forEach((cell: unknown, c) => {
        if (typeof cell === 'string') text += cell.length;
        const test = this.cell(cell, `${at}.when[${c}]`);
        if (test === undefined) ok = false;
        else tests.push(test);
      });
      // Each cell is bounded; so is their sum, before a table of huge cells costs more to parse.
      if (text > MAX_RULESET_TEXT_LENGTH) {
        fail(at, 'LIMIT_EXCEEDED', `the table's cells hold more than ${MAX_RULESET_TEXT_LENGTH} characters`);
        return undefined;
      }
      const outcome = this.outcome(row.then ?? [], outputs, `${at}.then`);
      if (outcome === undefined) ok = false;
      cells.push(tests);
      then.push(outcome ?? []);
    }
    return ok ? { cells, then } : undefined;
  }

  outcome(value: unknown, outputs: string[] | undefined, at: string): unknown[] | undefined {
    if (!Array.isArray(value)) {
      this.#fail(at, 'INVALID_TABLE', 'then must be an array of one value per output');
      return undefined;
    }
    if (outputs !== undefined && value.length !== outputs.length) {
      this.#fail(at, 'INVALID_TABLE', `${value.length} output values; the table has ${outputs.length} outputs${outputs.length > 0 ? ` (${outputs.join(', ')})` : ''}`);
      return undefined;
    }
    // Most outputs are numbers and short strings: those need no JSON round trip.
    const values = value as unknown[];
    if (values.every((v) => v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
      const text = values.reduce<number>((sum, v) => sum + (typeof v === 'string' ? v.length : 8), 0);
      if (text <= this.#options.limits.maxExpectedValueBytes / 6) return values.map((v) => (Object.is(v, -0) ? 0 : v));
    }
    const json = jsonOf(value);
    if (json === undefined) {
      this.#fail(at, 'INVALID_TABLE', 'output values must be JSON values with finite numbers');
      return undefined;
    }
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > this.#options.limits.maxExpectedValueBytes) {
      this.#fail(at, 'TOO_LONG', `the row's outputs are ${bytes} bytes of JSON; the limit is ${this.#options.limits.maxExpectedValueBytes}`);
      return undefined;
    }
    return JSON.parse(json) as unknown[];
  }

  cell(cell: unknown, at: string): CellTest | undefined {
    const limits = this.#options.limits;
    if (typeof cell !== 'string') {
      this.#fail(at, 'INVALID_TABLE', 'a cell is the text of a test, such as "-", "\\"US\\"", ">= 700" or "[1..5)"');
      return undefined;
    }
    if (cell.length > limits.maxTableCellLength) {
      this.#fail(at, 'TOO_LONG', `a cell is at most ${limits.maxTableCellLength} characters`);
      return undefined;
    }
    const known = this.#read.get(cell);
    if (known !== undefined) return known;
    const test = this.#readCell(cell, at);
    if (test !== undefined) this.#read.set(cell, test);
    return test;
  }

  #readCell(cell: string, at: string): CellTest | undefined {
    const limits = this.#options.limits;
    const parsed = parseCell(cell);
    if (!parsed.ok) {
      this.#fail(at, 'SYNTAX_ERROR', parsed.message, { line: 1, column: parsed.column });
      return undefined;
    }
    if ('test' in parsed) return parsed.test;
    const compiled = compileExpression(cell, limits, {
      compilePattern: this.#options.compilePattern(),
      map: identity,
      tableNames: CELL_NAMES,
    }, 'cell');
    if (!compiled.ok) {
      this.#expressionError(at, compiled.error);
      return undefined;
    }
    const roots = rootsOf(compiled.expr);
    const unavailable = [...roots].find((name) => NOT_IN_CELLS.has(name));
    if (unavailable !== undefined) {
      this.#fail(at, 'NOT_ALLOWED', `\`$${unavailable}\` is not available in a cell: a cell sees $cell (the column's value) and the payload`);
      return undefined;
    }
    if (!roots.has('cell')) {
      this.#fail(at, 'SYNTAX_ERROR', 'this cell is neither a test (-, a literal, < 5, [1..5), in [...], not(...)) nor an expression using $cell; a text value is written in double quotes');
      return undefined;
    }
    this.#expressionCells.push(compiled.expr);
    return { kind: 'expression', id: this.#expressionCells.length - 1 };
  }

  #expressionError(at: string, e: ExpressionError): void {
    this.#fail(at, e.code, e.message, e.line === undefined ? undefined : { line: e.line, column: e.column });
  }
}

const CELL_NAMES: ReadonlySet<'cell'> = new Set(['cell']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
