/**
 * Reference semantics of decision tables, written from the contract (issue
 * 34) as a plain row-by-row scan: every row's cells read from their text
 * and checked in order, then the hit policy, noMatch and the rule's
 * expression for the matched row. It shares no code with `compiler/table/`
 * on purpose (expressions are the expression reference's): the
 * differential test trusts it because it is short enough to read against
 * the contract.
 *
 * Models rules with a table, a fieldPath or none, `required` and `when`;
 * not forEach or schema (ReferenceUnsupported).
 */
import type { FailureRecord, RuleDefinition, TableDefinition, ValidationResult } from '../../compiler/types.ts';
import {
  cut, deepEqual, evaluate, inferExpected, isoToMs, isSubject, parseExpression, parsePath, renderTemplate,
  ReferenceUnsupported, resolve, type Scope,
} from './reference-interpreter.ts';

type Cell = (value: unknown, scope: Scope) => boolean;

/** A literal of a cell: JSON, or date("...") as epoch milliseconds. */
function literal(text: string): unknown {
  const t = text.trim();
  const date = /^date\(\s*("(?:[^"\\]|\\.)*")\s*\)$/.exec(t);
  if (date !== null) return isoToMs(JSON.parse(date[1]));
  return JSON.parse(t);
}

function compare(op: string, v: unknown, x: unknown): boolean {
  const comparable = (typeof v === 'number' && typeof x === 'number') || (typeof v === 'string' && typeof x === 'string');
  if (!comparable) return false;
  const a = v as number;
  const b = x as number;
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}

/** What a cell (not `-`, not an expression) says about a present value. */
function plain(text: string): ((v: unknown) => boolean) | undefined {
  const t = text.trim();
  const cmp = /^(<=|>=|!=|<|>)(.*)$/s.exec(t);
  if (cmp !== null) {
    const x = literal(cmp[2]);
    return cmp[1] === '!=' ? (v) => !deepEqual(v, x) : (v) => compare(cmp[1], v, x);
  }
  const list = /^in\s*(\[.*\])$/s.exec(t);
  if (list !== null) {
    const items = splitList(list[1]).map(literal);
    return (v) => items.some((x) => deepEqual(v, x));
  }
  const range = /^([[(])(.*)\.\.(.*)([\])])$/s.exec(t);
  if (range !== null) {
    const low = literal(range[2]);
    const high = literal(range[3]);
    return (v) => (range[1] === '[' ? compare('>=', v, low) : compare('>', v, low)) &&
      (range[4] === ']' ? compare('<=', v, high) : compare('<', v, high));
  }
  try {
    const x = literal(t);
    return (v) => deepEqual(v, x);
  } catch {
    return undefined;
  }
}

/** The items of `[a, b, date("x")]`; the tests write no commas inside strings. */
function splitList(text: string): string[] {
  return text.slice(1, -1).split(',');
}

/** Whether a cell lets a missing value through: `-`, null, or a list holding null. */
function acceptsMissing(t: string): boolean {
  if (t === '-' || t === 'null') return true;
  const list = /^in\s*(\[.*\])$/s.exec(t);
  return list !== null && splitList(list[1]).some((item) => item.trim() === 'null');
}

export function readCell(text: string): Cell {
  const t = text.trim();
  if (t === '-') return () => true;
  const missingMatches = acceptsMissing(t);
  const not = /^not\s*\((.*)\)$/s.exec(t);
  const test = not !== null ? plain(not[1]) : plain(t);
  const body = test === undefined ? parseExpression(t) : undefined;
  return (v, scope) => {
    if (v === undefined || v === null) return missingMatches;
    if (test !== undefined) return not !== null ? !test(v) : test(v);
    return evaluate(body as never, { ...scope, cell: v }) === true;
  };
}

interface Pending {
  record: FailureRecord;
}

/** The output of the matched row an expression `$value op $row.name` compares with, if any. */
function rowOutput(rule: RuleDefinition, table: TableDefinition): string | undefined {
  if (rule.expression === undefined) return undefined;
  const e = parseExpression(rule.expression) as never as Record<string, any>;
  if (e.type !== 'BinaryExpression' || !['<', '<=', '>', '>=', '==', '!=', '===', '!=='].includes(e.operator)) return undefined;
  const other = isSubject(e.left as never, rule) ? e.right : isSubject(e.right as never, rule) ? e.left : undefined;
  if (other?.type !== 'MemberExpression' || other.object.type !== 'Identifier' || other.object.name !== '$row' || other.computed) return undefined;
  const name = other.property.name as string;
  return (table.outputs ?? []).includes(name) ? name : undefined;
}

/** The result of one rule with a table (a ruleset of one rule). */
export function referenceTableValidate(rule: RuleDefinition, payload: unknown, now: number): ValidationResult {
  const table = rule.table;
  if (table === undefined || rule.forEach !== undefined || rule.schema !== undefined) throw new ReferenceUnsupported('a table rule without forEach or schema');
  const field = rule.fieldPath === undefined ? undefined : parsePath(rule.fieldPath);
  const value = field === undefined ? payload : resolve(payload, field, 0);
  const given = rule.expectedValue === undefined || rule.expectedValue === null ? undefined : rule.expectedValue;
  const constantExpected = given ?? inferExpected(rule);
  const base: Scope = { payload, value, item: undefined, index: undefined, expected: constantExpected, now, params: [] };
  if (rule.when !== undefined && evaluate(parseExpression(rule.when), base) !== true) {
    return { isValid: true, totalRulesEvaluated: 0, failures: [] };
  }
  const present = value !== undefined && value !== null;
  if (field !== undefined && !present && rule.required !== true) return { isValid: true, totalRulesEvaluated: 0, failures: [] };
  const out: Pending[] = [];
  const fail = (message: string, errorCode: string, expected: unknown): void => {
    out.push({
      record: {
        ruleCode: rule.code,
        ruleName: rule.name,
        severity: rule.severity ?? 'Error',
        message: cut(message),
        errorCode,
        fieldPath: rule.fieldPath ?? '',
        actualValue: field !== undefined && present ? value : null,
        expectedValue: expected === undefined ? null : expected,
      },
    });
  };
  const message = (scope: Scope): string => (rule.message === undefined ? `${rule.name} failed` : renderTemplate(rule.message, scope));
  const result = (): ValidationResult => ({ isValid: out.length === 0, totalRulesEvaluated: 1, failures: out.map((p) => p.record) });

  if (field !== undefined && !present) {
    fail(message(base), rule.errorCode ?? rule.code, constantExpected);
    return result();
  }

  const outputs = table.outputs ?? [];
  const rowObject = (then: unknown[]): Record<string, unknown> => Object.fromEntries(outputs.map((name, i) => [name, then[i]]));
  const compared = given === undefined && (constantExpected === null || constantExpected === undefined) ? rowOutput(rule, table) : undefined;
  const judge = (then: unknown[], rowIndex: number | null, named: boolean): void => {
    if (rule.expression === undefined) return;
    const row = rowObject(then);
    const expected = compared === undefined ? constantExpected : row[compared];
    const scope: Scope = { ...base, expected, row, rowIndex };
    if (evaluate(parseExpression(rule.expression), scope) === true) return;
    fail(message(scope) + (named ? ` (table.rows[${rowIndex}])` : ''), rule.errorCode ?? rule.code, expected);
  };

  const values = table.inputs.map((input) => (input.path !== undefined
    ? resolve(payload, parsePath(input.path), 0)
    : evaluate(parseExpression(input.expression as string), base)));
  const cells = table.rows.map((row) => row.when.map(readCell));
  const matches: number[] = [];
  cells.forEach((row, r) => {
    if (row.every((cell, c) => cell(values[c], base))) matches.push(r);
  });

  if (matches.length === 0) {
    const noMatch = table.noMatch ?? 'fail';
    if (noMatch === 'pass') return result();
    if (noMatch === 'fail') {
      const aboutRow = rule.message !== undefined && /\$row/.test(rule.message);
      fail(aboutRow || rule.message === undefined ? `${rule.name}: no row of its table matches` : message(base), rule.errorCode ?? rule.code, constantExpected);
      return result();
    }
    judge(noMatch.then, null, false);
    return result();
  }
  const thenOf = (r: number): unknown[] => table.rows[r].then ?? [];
  switch (table.hitPolicy) {
    case 'first':
      judge(thenOf(matches[0]), matches[0], false);
      break;
    case 'collect':
      for (const r of matches) judge(thenOf(r), r, true);
      break;
    case 'unique':
      if (matches.length > 1) {
        fail(`${rule.name}: table rows ${matches[0]} and ${matches[1]} both match, and the hit policy unique allows one`, 'TABLE_NOT_UNIQUE', null);
      } else {
        judge(thenOf(matches[0]), matches[0], false);
      }
      break;
    case 'any': {
      const other = matches.find((r) => !deepEqual(thenOf(r), thenOf(matches[0])));
      if (other !== undefined) {
        fail(`${rule.name}: table rows ${matches[0]} and ${other} match with different outputs, and the hit policy any needs them equal`, 'TABLE_OUTPUTS_DIFFER', null);
      } else {
        judge(thenOf(matches[0]), matches[0], false);
      }
      break;
    }
  }
  return result();
}

/**
 * The rows of `table` that match `payload`, in row order, read from the
 * cells' text as above (for checking the analysis's witnesses).
 */
export function referenceMatchingRows(table: TableDefinition, payload: unknown, now: number): number[] {
  let cells = cellsRead.get(table);
  if (cells === undefined) cellsRead.set(table, (cells = table.rows.map((row) => row.when.map(readCell))));
  const base: Scope = { payload, value: payload, item: undefined, index: undefined, expected: undefined, now, params: [] };
  const values = table.inputs.map((input) => (input.path !== undefined
    ? resolve(payload, parsePath(input.path), 0)
    : evaluate(parseExpression(input.expression as string), base)));
  const matches: number[] = [];
  cells.forEach((row, r) => {
    if (row.every((cell, c) => cell(values[c], base))) matches.push(r);
  });
  return matches;
}

/** Each table's cells read once: the analysis tests check many payloads against one table. */
const cellsRead = new WeakMap<TableDefinition, Cell[][]>();
