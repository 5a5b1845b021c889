/**
 * Save-time analysis of a decision table (docs/rule-language.md, "Decision
 * tables"): which inputs reach which rows, found by a sweep over the
 * regions of each column (table-domain.ts), column after column, as in
 * Calvanese et al., "Semantics and Analysis of DMN Decision Tables"
 * (arXiv 1603.07466). At each column the rows still in play split by the
 * region of the column's value; a branch no row survives is a gap, and at
 * the last column the rows left are exactly those one input matches. So
 * one sweep finds:
 *
 * - TABLE_OVERLAP: two rows one input matches, under `unique` (always a
 *   failure at run time) and `any` (when their outputs differ);
 * - TABLE_UNREACHABLE: a row no input reaches: under `first`, one that
 *   comes after a row matching the same input for every input it matches
 *   (the rows that take them are named); under any policy, one that no
 *   input matches at all (a literal outside the payload schema's enum);
 * - TABLE_GAP: an input no row matches while `noMatch` is "fail";
 *
 * each with a witness input, a payload fragment. Separately, TYPE_MISMATCH
 * for a cell whose literal has a kind the payload schema does not allow at
 * the input's path, and UNKNOWN_FIELD for an input path it does not declare.
 *
 * Expression cells are not evaluated: where the answer hangs on one, the
 * analysis says so (TABLE_INCOMPLETE) rather than guess. The sweep is
 * bounded by a budget of steps (a row checked against a region); past it,
 * the analysis stops, keeps what it found and says where it stopped
 * (TABLE_INCOMPLETE), and claims no unreachable rows.
 *
 * Assumes payloads follow the payload schema, when there is one; the
 * witnesses are real inputs (the tests evaluate them with the reference
 * interpreter).
 */
import type { PayloadSchema } from '../analysis/payload-schema-paths.ts';
import { ARRAY, BOOLEAN, NUMBER, OBJECT, STRING, describeTypes, typeOfValue } from '../analysis/value-types.ts';
import { formatPath, type PathSegment } from '../paths.ts';
import type { CellTest } from './cell-test.ts';
import type { TablePlan } from './plan-table.ts';
import { columnDomain, domainCost, NO, UNKNOWN, type ColumnDomain, type DomainSource } from './table-domain.ts';

export type TableWarningCode = 'TABLE_OVERLAP' | 'TABLE_UNREACHABLE' | 'TABLE_GAP' | 'TABLE_INCOMPLETE' | 'TYPE_MISMATCH' | 'UNKNOWN_FIELD';

export interface TableFinding {
  code: TableWarningCode;
  /** Where in the rule: `table.rows[12]`, `table.rows[12].when[2]`, `table.inputs[0].path`, `table`. */
  path: string;
  message: string;
  /** An input that shows the finding: the payload fragment the table's path inputs read. */
  witness?: Record<string, unknown>;
}

export interface TableAnalysisOptions {
  /** The context's payload schema, when there is one. */
  schema?: PayloadSchema;
  /** Steps the sweep may take; DEFAULT_ANALYSIS_BUDGET when not given. */
  budget?: number;
}

/**
 * Steps of the analysis (a cell's answer for one region, a row carried
 * through one branch of the sweep): some 50 ns each, so at most a few
 * hundred milliseconds. Tables of 10,000 rows of equality, list and range
 * columns take less than this; hundreds of wide, overlapping ranges in two
 * columns stop here.
 */
export const DEFAULT_ANALYSIS_BUDGET = 5_000_000;
/** Findings of one kind listed in full; past them one more says how many were left out. */
const MAX_LISTED = 10;
/** Overlapping pairs remembered (so each is said once). */
const MAX_PAIRS = 10_000;
/** Pairs looked at in one region, whose matching rows may be many. */
const MAX_PAIRS_PER_REGION = 32;
/** Inputs that match no row, listed: a few show the hole; more repeat it. */
const MAX_GAPS = 3;
/** Rows named as shadowing one row. */
const MAX_SHADOWERS = 5;

/**
 * The findings of one table, in a stable order: per kind, by row.
 *
 * @example
 * analyzeTable(plan); // [{ code: 'TABLE_UNREACHABLE', path: 'table.rows[2]', message: 'no input reaches rows[2]: ...' }]
 */
export function analyzeTable(plan: TablePlan, options: TableAnalysisOptions = {}): TableFinding[] {
  return new TableAnalysis(plan, options).run();
}

interface Column {
  name: string;
  segments?: PathSegment[];
  source: DomainSource;
}

/** A finding's input: one region index per column swept so far. */
type Choice = readonly number[];

class Stopped extends Error {}

class TableAnalysis {
  readonly #plan: TablePlan;
  readonly #columns: Column[];
  readonly #findings: TableFinding[] = [];
  readonly #budget: number;
  #steps = 0;
  #domains: ColumnDomain[] = [];
  /** Per column, per row, the answers of the row's cell by region. */
  #answers: Uint8Array[][] = [];
  readonly #rowCount: number;

  // What the sweep found.
  readonly #matched: Uint8Array;
  readonly #reachable: Uint8Array;
  /** Under first, per row not (yet) reached, the first rows that took inputs it matches. */
  readonly #shadowers: (number[] | undefined)[] = [];
  readonly #pairs = new Map<number, { a: number; b: number; choice: Choice }>();
  #pairsLeftOut = 0;
  /** The inputs that match no row with the fewest columns set (the widest holes), at most MAX_GAPS. */
  readonly #gaps: Choice[] = [];
  #oddGap: Choice | undefined;
  #gapsLeftOut = 0;
  /** Conclusions an expression cell kept open, with an example cell. */
  #openGaps = 0;
  #openOverlaps = 0;
  #openCell: string | undefined;
  /** Where the budget ran out: the regions of the columns swept so far. */
  #stoppedAt: Choice | undefined;
  /** The sweep's current input, one region per column so far. */
  readonly #choice: number[] = [];
  #outputKeys: string[] | undefined;

  constructor(plan: TablePlan, options: TableAnalysisOptions) {
    this.#plan = plan;
    this.#budget = options.budget ?? DEFAULT_ANALYSIS_BUDGET;
    this.#rowCount = plan.cells.length;
    this.#matched = new Uint8Array(this.#rowCount);
    this.#reachable = new Uint8Array(this.#rowCount);
    this.#columns = plan.inputs.map((input, c) => {
      const column: Column = { name: input.name, source: {} };
      if (input.path === undefined) return column;
      column.segments = input.path.segments;
      const schema = options.schema;
      if (schema === undefined) return column;
      const lookup = schema.lookup(input.path.segments);
      if (lookup.status === 'undeclared') {
        this.#findings.push({
          code: 'UNKNOWN_FIELD',
          path: `table.inputs[${c}].path`,
          message: `\`${input.path.text}\` is not in the payload schema: the column ${JSON.stringify(input.name)} is always missing, so only - and null cells match it`,
        });
      } else if (lookup.status === 'declared') {
        column.source.declaredTypes = lookup.types & (NUMBER | STRING | BOOLEAN | ARRAY | OBJECT);
        const allowed = schema.allowedValues(input.path.segments);
        if (allowed !== undefined) column.source.allowed = allowed;
      }
      return column;
    });
  }

  run(): TableFinding[] {
    this.#typeMismatches();
    const plan = this.#plan;
    const width = plan.inputs.length;
    if (this.#rowCount === 0) {
      if (plan.noMatch === 'fail') this.#findings.push({ code: 'TABLE_GAP', path: 'table.rows', message: 'the table has no rows and noMatch is "fail": every payload fails the rule', witness: {} });
      return this.#findings;
    }
    try {
      for (let c = 0; c < width; c++) {
        const tests = plan.cells.map((row) => row[c]);
        this.#spend(domainCost(tests, this.#columns[c].source));
        const domain = columnDomain(tests, this.#columns[c].source);
        this.#domains.push(domain);
        this.#answers.push(tests.map((test) => domain.matches.get(test) as Uint8Array));
      }
      this.#explore(0, Array.from({ length: this.#rowCount }, (_, r) => r * 2), this.#choice);
    } catch (err) {
      if (!(err instanceof Stopped)) throw err;
    }
    this.#report();
    return this.#findings;
  }

  #spend(steps: number): void {
    this.#steps += steps;
    if (this.#steps <= this.#budget) return;
    this.#stoppedAt = [...this.#choice];
    throw new Stopped();
  }

  /**
   * Sweeps column `c` for the rows still in play: `rows` holds each as
   * `row * 2 + open`, open when an expression cell of the row was met.
   */
  #explore(c: number, rows: readonly number[], choice: number[]): void {
    const domain = this.#domains[c];
    const answers = this.#answers[c];
    const cells = this.#plan.cells;
    const last = c === this.#columns.length - 1;
    // Only where one of these rows' cells changes its answer does the column split them.
    const seen = new Set<CellTest>();
    const cuts = new Set<number>();
    for (const entry of rows) {
      const test = cells[entry >> 1][c];
      if (seen.has(test)) continue;
      seen.add(test);
      for (const cut of domain.changes.get(test) as Int32Array) cuts.add(cut);
    }
    this.#spend(rows.length + cuts.size);
    const starts = [0, ...[...cuts].sort((a, b) => a - b)];
    const segments = starts.map((start, k) => {
      const end = starts[k + 1] ?? domain.regions.length;
      let region = start;
      while (region < end && domain.regions[region].odd) region++;
      return region < end ? { region, odd: false } : { region: start, odd: true };
    });
    // Witnesses of the expected kinds first.
    segments.sort((x, y) => Number(x.odd) - Number(y.odd));
    const explored = new Map<number, number[][]>();
    let gapHere = false;
    for (const { region } of segments) {
      choice.push(region);
      this.#spend(rows.length);
      const next: number[] = [];
      for (const entry of rows) {
        const answer = answers[entry >> 1][region];
        if (answer !== NO) next.push(answer === UNKNOWN ? entry | 1 : entry);
      }
      if (next.length === 0) {
        // One input of a column that no row takes is enough; the column's other such values tell nothing more.
        if (!gapHere) this.#gap(choice);
        gapHere = true;
      } else if (last) {
        this.#leaf(next, choice);
      } else {
        // Values of the column that leave the same rows in play lead to the same findings: sweep them once.
        const key = hashRows(next);
        const same = explored.get(key);
        if (same === undefined || !same.some((other) => equalArrays(other, next))) {
          if (same === undefined) explored.set(key, [next]);
          else same.push(next);
          this.#explore(c + 1, next, choice);
        }
      }
      choice.pop();
    }
  }

  /** The rows one input (one region per column) matches, in row order, as `row * 2 + open`. */
  #leaf(rows: readonly number[], choice: Choice): void {
    this.#spend(rows.length);
    const policy = this.#plan.hitPolicy;
    let sure = 0;
    let firstSure = -1;
    for (const entry of rows) {
      const r = entry >> 1;
      this.#matched[r] = 1;
      if (firstSure < 0) this.#reachable[r] = 1;
      else if (this.#reachable[r] === 0) this.#shadowedBy(r, firstSure);
      if ((entry & 1) === 0) {
        sure++;
        if (firstSure < 0) firstSure = r;
      } else {
        this.#openCell ??= this.#expressionCellOf(r);
      }
    }
    if (sure === 0 && this.#plan.noMatch === 'fail') this.#openGaps++;
    if (policy !== 'unique' && policy !== 'any') return;
    let looked = 0;
    for (let i = 0; i < rows.length && looked < MAX_PAIRS_PER_REGION; i++) {
      for (let j = i + 1; j < rows.length && looked < MAX_PAIRS_PER_REGION; j++) {
        const a = rows[i] >> 1;
        const b = rows[j] >> 1;
        if (policy === 'any' && this.#outputKey(a) === this.#outputKey(b)) continue;
        looked++;
        if (((rows[i] | rows[j]) & 1) !== 0) {
          this.#openOverlaps++;
          continue;
        }
        this.#pair(a, b, choice);
      }
    }
  }

  #shadowedBy(r: number, by: number): void {
    const list = this.#shadowers[r];
    if (list === undefined) this.#shadowers[r] = [by];
    else if (list.length < MAX_SHADOWERS && !list.includes(by)) list.push(by);
  }

  #pair(a: number, b: number, choice: Choice): void {
    const key = a * this.#rowCount + b;
    if (this.#pairs.has(key)) return;
    if (this.#pairs.size >= MAX_PAIRS) {
      this.#pairsLeftOut++;
      return;
    }
    this.#pairs.set(key, { a, b, choice: [...choice] });
  }

  #gap(choice: Choice): void {
    if (this.#plan.noMatch !== 'fail') return;
    const odd = choice.some((region, c) => this.#domains[c].regions[region].odd);
    if (odd) {
      if (this.#oddGap === undefined || choice.length < this.#oddGap.length) this.#oddGap = [...choice];
      return;
    }
    if (this.#gaps.length < MAX_GAPS) {
      this.#gaps.push([...choice]);
      return;
    }
    this.#gapsLeftOut++;
    // Keep the widest holes: a gap found with fewer columns set replaces the one with the most.
    let widest = 0;
    this.#gaps.forEach((gap, i) => {
      if (gap.length > this.#gaps[widest].length) widest = i;
    });
    if (choice.length < this.#gaps[widest].length) this.#gaps[widest] = [...choice];
  }

  #outputKey(r: number): string {
    this.#outputKeys ??= this.#plan.then.map((then) => JSON.stringify(then));
    return this.#outputKeys[r];
  }

  #expressionCellOf(r: number): string | undefined {
    const c = this.#plan.cells[r].findIndex((test) => test.kind === 'expression');
    return c < 0 ? undefined : `table.rows[${r}].when[${c}]`;
  }

  /** The payload fragment of a choice, and how it reads; undefined when the inputs' paths make it impossible. */
  #witness(choice: Choice): { fragment: Record<string, unknown>; text: string } | undefined {
    const fragment: Record<string, unknown> = {};
    const notes: string[] = [];
    const values: unknown[] = [];
    for (let c = 0; c < choice.length; c++) {
      const value = this.#domains[c].regions[choice[c]].value;
      values.push(value);
      const column = this.#columns[c];
      if (column.segments === undefined) notes.push(`${column.name} ${value === undefined ? 'missing' : `= ${JSON.stringify(value)}`}`);
      else if (value === undefined) notes.push(`${formatPath(column.segments) || 'the payload'} missing`);
      else if (!place(fragment, column.segments, value)) return undefined;
    }
    // Two inputs may read one path (or one inside the other): the fragment must give each the value chosen.
    for (let c = 0; c < choice.length; c++) {
      const segments = this.#columns[c].segments;
      if (segments !== undefined && !sameValue(read(fragment, segments), values[c])) return undefined;
    }
    let text = JSON.stringify(fragment);
    if (text.length > 300) text = `${text.slice(0, 299)}…`;
    if (notes.length > 0) text += ` with ${notes.join(', ')}`;
    return { fragment, text };
  }

  #report(): void {
    const plan = this.#plan;
    const complete = this.#stoppedAt === undefined;
    const findings = this.#findings;

    const pairs = [...this.#pairs.values()].sort((x, y) => x.b - y.b || x.a - y.a);
    let listed = 0;
    for (const { a, b, choice } of pairs) {
      if (listed >= MAX_LISTED) break;
      const witness = this.#witness(choice);
      if (witness === undefined) continue;
      listed++;
      const why = plan.hitPolicy === 'unique'
        ? 'under hit policy unique such an input fails the rule'
        : 'their outputs differ, so under hit policy any such an input fails the rule';
      findings.push({ code: 'TABLE_OVERLAP', path: `table.rows[${b}]`, message: `rows[${a}] and rows[${b}] both match ${witness.text}: ${why}`, witness: witness.fragment });
    }
    const moreOverlaps = pairs.length - listed + this.#pairsLeftOut;
    if (listed > 0 && moreOverlaps > 0) {
      findings.push({ code: 'TABLE_OVERLAP', path: 'table.rows', message: `${moreOverlaps} more pairs of overlapping rows are not listed` });
    }

    if (complete) {
      let unreachable = 0;
      for (let r = 0; r < this.#rowCount; r++) {
        const shadowed = plan.hitPolicy === 'first' ? this.#reachable[r] === 0 : this.#matched[r] === 0;
        if (!shadowed) continue;
        if (++unreachable > MAX_LISTED) continue;
        findings.push({ code: 'TABLE_UNREACHABLE', path: `table.rows[${r}]`, message: this.#unreachableMessage(r) });
      }
      if (unreachable > MAX_LISTED) {
        findings.push({ code: 'TABLE_UNREACHABLE', path: 'table.rows', message: `${unreachable - MAX_LISTED} more unreachable rows are not listed` });
      }
    }

    const gaps = (this.#gaps.length > 0 ? [...this.#gaps] : this.#oddGap === undefined ? [] : [this.#oddGap]).sort((x, y) => x.length - y.length);
    let gapsListed = 0;
    for (const choice of gaps) {
      const witness = this.#witness(choice);
      if (witness === undefined) continue;
      gapsListed++;
      const rest = choice.length < this.#columns.length ? ', whatever the other inputs are' : '';
      findings.push({ code: 'TABLE_GAP', path: 'table.rows', message: `no row matches ${witness.text}${rest}, and noMatch is "fail": such a payload fails the rule`, witness: witness.fragment });
    }
    if (gapsListed > 0 && this.#gapsLeftOut > 0) {
      findings.push({ code: 'TABLE_GAP', path: 'table.rows', message: `${this.#gapsLeftOut} more inputs that match no row are not listed` });
    }

    const open: string[] = [];
    if (this.#openOverlaps > 0 && (plan.hitPolicy === 'unique' || plan.hitPolicy === 'any')) open.push('whether rows overlap');
    if (this.#openGaps > 0 && gapsListed === 0) open.push('whether every input matches a row');
    if (!complete) {
      const stoppedAt = this.#stoppedAt as Choice;
      const at = this.#domains.length < this.#columns.length
        ? `while reading the cells of the column ${JSON.stringify(this.#columns[this.#domains.length].name)}`
        : `at ${this.#place(stoppedAt)}`;
      findings.push({
        code: 'TABLE_INCOMPLETE',
        path: 'table',
        message: `the analysis stopped after ${this.#budget.toLocaleString('en-US')} steps, ${at}: the findings above are real, but inputs past that point were not checked, and unreachable rows are not reported`,
      });
    } else if (open.length > 0 && this.#openCell !== undefined) {
      findings.push({
        code: 'TABLE_INCOMPLETE',
        path: this.#openCell,
        message: `expression cells are not analyzed: ${open.join(' and ')} depends on cells such as this one, so it was not decided`,
      });
    }
  }

  #unreachableMessage(r: number): string {
    const shadowers = [...(this.#shadowers[r] ?? [])].sort((a, b) => a - b);
    const schema = this.#columns.some((column) => column.source.allowed !== undefined || column.source.declaredTypes !== undefined);
    if (this.#matched[r] === 0) {
      return `no input matches rows[${r}]${schema ? ' among the values the payload schema allows' : ''}: its cells can never all hold`;
    }
    const named = shadowers.map((s) => `rows[${s}]`).join(', ');
    return `no input reaches rows[${r}]: under hit policy first, every input it matches is taken by an earlier row (${named}${shadowers.length >= MAX_SHADOWERS ? ', …' : ''})`;
  }

  /** Where the sweep was: the columns' values so far. */
  #place(choice: Choice): string {
    return choice.map((region, c) => {
      const value = this.#domains[c].regions[region].value;
      return `${this.#columns[c].name} = ${value === undefined ? 'missing' : JSON.stringify(value)}`;
    }).join(', ') || 'the first column';
  }

  /** TYPE_MISMATCH: a literal of a kind the payload schema does not allow at the input's path, once per column and cell text. */
  #typeMismatches(): void {
    const reported = new Map<CellTest, { finding: TableFinding; more: number }>();
    this.#plan.cells.forEach((row, r) => {
      row.forEach((test, c) => {
        const declared = this.#columns[c].source.declaredTypes;
        if (declared === undefined || declared === 0) return;
        const plain = test.kind === 'not' ? test.test : test;
        const literals = plain.kind === 'equal' || plain.kind === 'notEqual' || plain.kind === 'compare'
          ? [plain.value]
          : plain.kind === 'oneOf' ? plain.values : plain.kind === 'range' ? [plain.low] : [];
        const wrong = literals.find((value) => value !== null && (typeOfValue(value) & declared) === 0);
        if (wrong === undefined) return;
        const known = reported.get(test);
        if (known !== undefined) {
          known.more++;
          return;
        }
        const column = this.#columns[c];
        const path = formatPath(column.segments ?? []);
        const outcome = plain.kind === 'notEqual' || test.kind === 'not' ? 'it holds for every present value' : 'it never matches';
        const finding: TableFinding = {
          code: 'TYPE_MISMATCH',
          path: `table.rows[${r}].when[${c}]`,
          message: `${JSON.stringify(wrong)} is ${describeTypes(typeOfValue(wrong))} but \`${path}\` is declared ${describeTypes(declared)}: ${outcome}`,
        };
        reported.set(test, { finding, more: 0 });
        this.#findings.push(finding);
      });
    });
    for (const { finding, more } of reported.values()) {
      if (more > 0) finding.message += ` (the same cell is in ${more} more rows)`;
    }
  }
}

function hashRows(rows: readonly number[]): number {
  let h = 0x811c9dc5 ^ rows.length;
  for (const entry of rows) h = Math.imul(h ^ entry, 0x01000193);
  return h;
}

function equalArrays(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Sets `value` at `segments` in `root`, making objects and arrays on the way; false where a value is already in the way. */
function place(root: Record<string, unknown>, segments: readonly PathSegment[], value: unknown): boolean {
  if (segments.length === 0) return false;
  let node: Record<string | number, unknown> = root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const key = 'key' in segment ? segment.key : 'index' in segment ? segment.index : undefined;
    if (key === undefined) return false;
    if (i === segments.length - 1) {
      if (node[key] !== undefined) return sameValue(node[key], value);
      node[key] = value;
      return true;
    }
    const nextIsIndex = 'index' in segments[i + 1];
    let next = node[key];
    if (next === undefined) {
      next = nextIsIndex ? [] : {};
      node[key] = next;
    }
    if (next === null || typeof next !== 'object' || Array.isArray(next) !== nextIsIndex) return false;
    node = next as Record<string | number, unknown>;
  }
  return true;
}

/** The value at `segments`, as a table's path input reads it. */
function read(root: unknown, segments: readonly PathSegment[]): unknown {
  let node = root;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object') return undefined;
    const key = 'key' in segment ? segment.key : 'index' in segment ? segment.index : undefined;
    if (key === undefined || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** Whether a cell sees the two values alike (JSON, so a structural comparison is enough). */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

