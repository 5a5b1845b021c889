/**
 * A deterministic automaton for `RegExp#test` of a pattern (`u` flag, no
 * other flags), by subset construction over its Thompson NFA (nfa.ts),
 * built in full when the pattern is compiled and run by dfa-matcher.ts.
 *
 * Search semantics: every state also holds the NFA's start, so a match may
 * begin at any code point. Assertions look at the characters on both sides
 * of a position: a state knows whether it is at the start of the input and
 * whether the previous code point was a word character (only when the
 * pattern has `\b` or `\B`), and the column a transition is taken on tells
 * the next code point's class, or the end of the input. Classes are split
 * by the word set when `\b` or `\B` occur, so a class is all word
 * characters or none. A state reaching the NFA's MATCH becomes the MATCH
 * sentinel (the search stops: `test` needs no more), and states from which
 * no match is reachable become DEAD (the search stops early, false).
 *
 * The construction stops, and the pattern goes to re2js instead, past any
 * of the bounds the caller gives: states, table cells, or work (NFA
 * instructions visited), so a pattern whose DFA would blow up exponentially
 * (`(a|b)*a(a|b){20}`) costs bounded time and memory at save time.
 */
import type { AST } from '@eslint-community/regexpp';
import { partitionAlphabet } from './alphabet.ts';
import { WORD } from './character-sets.ts';
import { IntListMap } from './int-list-map.ts';
import { DEAD, MATCH as MATCHED, type DfaTables } from './dfa-matcher.ts';
import {
  AT_END, AT_START, buildNfa, CHAR, MATCH, type Nfa, NfaUnsupported, NOT_WORD_BOUNDARY, SPLIT, WORD_BOUNDARY,
} from './nfa.ts';

/** Limits of one construction. */
export interface DfaBounds {
  /** Most DFA states. */
  maxStates: number;
  /** Most transition cells (states times columns). */
  maxCells: number;
  /** Most NFA instructions visited while building. */
  maxWork: number;
  /** Most NFA instructions. */
  maxInstructions: number;
}

/** The built DFA, or why there is none. */
export type DfaResult = { ok: true; tables: DfaTables; states: number; work: number } | { ok: false; reason: string };

class PastBound extends Error {}

/**
 * Builds the DFA of `pattern` within `bounds`.
 *
 * @example
 * const result = buildDfa(parse('(a|a)*b'), bounds);
 * if (result.ok) dfaMatcher(result.tables, '/(a|a)*b/u').test('aab'); // true
 */
export function buildDfa(pattern: AST.Pattern, bounds: DfaBounds): DfaResult {
  try {
    return { ok: true, ...new SubsetConstruction(buildNfa(pattern, bounds.maxInstructions), bounds).run() };
  } catch (error) {
    if (error instanceof PastBound || error instanceof NfaUnsupported) return { ok: false, reason: error.message };
    throw error;
  }
}

/** What the assertions of one position see. */
interface Position {
  atStart: boolean;
  atEnd: boolean;
  previousIsWord: boolean;
  nextIsWord: boolean;
}

/** A DFA state: the NFA instructions (CHAR, ASSERT or MATCH) its threads are at, and what it knows of the past. */
interface State {
  threads: number[];
  atStart: boolean;
  previousIsWord: boolean;
}

class SubsetConstruction {
  readonly #nfa: Nfa;
  readonly #bounds: DfaBounds;
  readonly #classCount: number;
  readonly #columns: number;
  readonly #classesOf: number[][];
  /** Per class: 1 when its code points are word characters (always 0 without `\b`/`\B`). */
  readonly #wordClass: number[];
  readonly #alphabet: ReturnType<typeof partitionAlphabet>;
  readonly #states: State[] = [];
  /** State indexes by threads; the tag holds the state's flags. */
  readonly #stateIndex = new IntListMap<number>();
  /** Cells by state index: a state index, DEAD or MATCHED. */
  readonly #cells: number[] = [];
  /** Where a list of NFA targets (after a character) leads; the tag is the word flag. */
  readonly #targetMemo = new IntListMap<number>();
  /** The word flags of the next character that rows are filled for: 0 and 1, or -1 for either (no `\b`/`\B`). */
  readonly #variants: number[];
  readonly #visited: Int32Array;
  #generation = 0;
  #work = 0;

  constructor(nfa: Nfa, bounds: DfaBounds) {
    this.#nfa = nfa;
    this.#bounds = bounds;
    const sets = nfa.usesWordBoundary ? [...nfa.sets, WORD] : nfa.sets;
    this.#alphabet = partitionAlphabet(sets);
    this.#classCount = this.#alphabet.classCount;
    // The matcher keeps classes in 16 bits.
    if (this.#classCount > 0xffff) throw new PastBound(`the pattern tells apart more than ${0xffff} kinds of characters`);
    this.#columns = this.#classCount + 1;
    this.#classesOf = this.#alphabet.classesOf;
    this.#wordClass = new Array<number>(this.#classCount).fill(0);
    if (nfa.usesWordBoundary) for (const cls of this.#classesOf[nfa.sets.length]) this.#wordClass[cls] = 1;
    this.#variants = nfa.usesWordBoundary ? [0, 1] : [-1];
    this.#visited = new Int32Array(nfa.instructions.length);
  }

  run(): { tables: DfaTables; states: number; work: number } {
    const initial = this.#close([this.#nfa.start]);
    let start = MATCHED;
    if (!initial.matched) start = this.#intern({ threads: initial.threads, atStart: true, previousIsWord: false });
    for (let index = 0; index < this.#states.length; index++) this.#fillRow(index);
    return { ...this.#tables(start), work: this.#work };
  }

  #fillRow(index: number): void {
    const state = this.#states[index];
    const row = index * this.#columns;
    const instructions = this.#nfa.instructions;
    for (const variant of this.#variants) {
      const here: Position = { atStart: state.atStart, atEnd: false, previousIsWord: state.previousIsWord, nextIsWord: variant === 1 };
      const { chars, matched } = this.#resolve(state.threads, here);
      const targets: number[][] = [];
      for (let cls = 0; cls < this.#classCount; cls++) targets.push([]);
      for (const pc of matched ? [] : chars) {
        const classes = this.#classesOf[instructions[pc].arg];
        const next = instructions[pc].next[0];
        for (let k = 0; k < classes.length; k++) targets[classes[k]].push(next);
        this.#spend(classes.length);
      }
      for (let cls = 0; cls < this.#classCount; cls++) {
        if (variant !== -1 && this.#wordClass[cls] !== variant) continue;
        this.#cells[row + cls] = matched ? MATCHED : this.#target(targets[cls], this.#wordClass[cls] === 1);
      }
    }
    const end: Position = { atStart: state.atStart, atEnd: true, previousIsWord: state.previousIsWord, nextIsWord: false };
    this.#cells[row + this.#classCount] = this.#resolve(state.threads, end).matched ? MATCHED : DEAD;
  }

  /**
   * The state after a character that moved the threads to `targets`; a new
   * search also starts there. Memoized by the targets in the order found
   * (deterministic for a state), which is cheaper than a sorted key and only
   * costs a repeated closure when two orders meet.
   */
  #target(targets: number[], previousIsWord: boolean): number {
    this.#spend(targets.length);
    const tag = previousIsWord ? 1 : 0;
    const known = this.#targetMemo.get(targets, tag);
    if (known !== undefined) return known;
    const seeds = targets.slice();
    seeds.push(this.#nfa.start);
    const closed = this.#close(seeds);
    const cell = closed.matched ? MATCHED : this.#intern({ threads: closed.threads, atStart: false, previousIsWord });
    this.#targetMemo.set(targets, tag, cell);
    return cell;
  }

  #intern(state: State): number {
    this.#spend(state.threads.length);
    const tag = (state.atStart ? 2 : 0) + (state.previousIsWord ? 1 : 0);
    const known = this.#stateIndex.get(state.threads, tag);
    if (known !== undefined) return known;
    if (this.#states.length >= this.#bounds.maxStates) {
      throw new PastBound(`the automaton needs more than ${this.#bounds.maxStates} states`);
    }
    if ((this.#states.length + 1) * this.#columns > this.#bounds.maxCells) {
      throw new PastBound(`the automaton needs more than ${this.#bounds.maxCells} transitions`);
    }
    this.#states.push(state);
    this.#stateIndex.set(state.threads, tag, this.#states.length - 1);
    return this.#states.length - 1;
  }

  /** Follows SPLITs from `seeds`: the CHAR and ASSERT instructions reached, sorted, and whether MATCH is. */
  #close(seeds: readonly number[]): { threads: number[]; matched: boolean } {
    const threads: number[] = [];
    let matched = false;
    const stack = this.#startWalk(seeds);
    while (stack.length > 0) {
      const pc = this.#nextUnvisited(stack);
      if (pc < 0) continue;
      const instruction = this.#nfa.instructions[pc];
      if (instruction.op === SPLIT) pushReversed(stack, instruction.next);
      else if (instruction.op === MATCH) matched = true;
      else threads.push(pc);
    }
    return { threads: threads.sort((a, b) => a - b), matched };
  }

  /** Follows SPLITs and the assertions that hold at `here`: the CHAR instructions reached, and whether MATCH is. */
  #resolve(threads: readonly number[], here: Position): { chars: number[]; matched: boolean } {
    const chars: number[] = [];
    let matched = false;
    const stack = this.#startWalk(threads);
    while (stack.length > 0) {
      const pc = this.#nextUnvisited(stack);
      if (pc < 0) continue;
      const instruction = this.#nfa.instructions[pc];
      if (instruction.op === SPLIT) pushReversed(stack, instruction.next);
      else if (instruction.op === MATCH) matched = true;
      else if (instruction.op === CHAR) chars.push(pc);
      else if (holds(instruction.arg, here)) stack.push(instruction.next[0]);
    }
    return { chars, matched };
  }

  /** A walk's stack, for visiting `seeds` in order, each instruction once (until the next walk). */
  #startWalk(seeds: readonly number[]): number[] {
    this.#generation++;
    const stack: number[] = [];
    pushReversed(stack, seeds);
    return stack;
  }

  /** Pops the stack: the instruction, or -1 when this walk has visited it already. */
  #nextUnvisited(stack: number[]): number {
    const pc = stack.pop()!;
    if (this.#visited[pc] === this.#generation) return -1;
    this.#visited[pc] = this.#generation;
    this.#spend(1);
    return pc;
  }

  #spend(units: number): void {
    this.#work += units;
    if (this.#work > this.#bounds.maxWork) {
      throw new PastBound(`building the automaton takes more than ${this.#bounds.maxWork} steps`);
    }
  }

  /** The tables, without the states from which no match is reachable; row offsets instead of state indexes. */
  #tables(start: number): { tables: DfaTables; states: number } {
    const live = this.#liveStates();
    const renumbered = new Map<number, number>();
    for (let index = 0; index < this.#states.length; index++) if (live[index]) renumbered.set(index, renumbered.size);
    const cell = (value: number): number => {
      if (value < 0) return value;
      const index = renumbered.get(value);
      return index === undefined ? DEAD : index * this.#columns;
    };
    const transitions = new Int32Array(renumbered.size * this.#columns);
    let at = 0;
    for (const index of renumbered.keys()) {
      for (let column = 0; column < this.#columns; column++) transitions[at++] = cell(this.#cells[index * this.#columns + column]);
    }
    // Typed, as the matcher keeps them: a compiled pattern shares them with its matcher.
    return {
      tables: {
        columns: this.#columns,
        directClasses: Uint16Array.from(this.#alphabet.directClasses),
        rangeStarts: Int32Array.from(this.#alphabet.rangeStarts),
        rangeClasses: Uint16Array.from(this.#alphabet.rangeClasses),
        transitions,
        start: cell(start),
      },
      states: renumbered.size,
    };
  }

  /** States from which MATCH is reachable, found backwards from the cells that hold it. */
  #liveStates(): boolean[] {
    const live = new Array<boolean>(this.#states.length).fill(false);
    const predecessors: number[][] = this.#states.map(() => []);
    const work: number[] = [];
    for (let index = 0; index < this.#states.length; index++) {
      for (let column = 0; column < this.#columns; column++) {
        const value = this.#cells[index * this.#columns + column];
        if (value >= 0) predecessors[value].push(index);
        else if (value === MATCHED && !live[index]) {
          live[index] = true;
          work.push(index);
        }
      }
    }
    while (work.length > 0) {
      for (const before of predecessors[work.pop()!]) {
        if (!live[before]) {
          live[before] = true;
          work.push(before);
        }
      }
    }
    return live;
  }
}

function pushReversed(stack: number[], items: readonly number[]): void {
  for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]);
}

function holds(assertion: number, here: Position): boolean {
  switch (assertion) {
    case AT_START:
      return here.atStart;
    case AT_END:
      return here.atEnd;
    case WORD_BOUNDARY:
      return here.previousIsWord !== here.nextIsWord;
    case NOT_WORD_BOUNDARY:
      return here.previousIsWord === here.nextIsWord;
    default:
      throw new Error(`unknown assertion ${assertion}`);
  }
}

