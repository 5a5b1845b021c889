/**
 * The exact code-point set that one regexpp character node matches under
 * JavaScript's `u` flag (no `i`, no `s`, no `v`).
 *
 * Fixed sets follow ECMA-262 (22.2.2.9 CharacterClassEscape). Unicode
 * property escapes (`\p{L}`, `\P{Script=Greek}`) are asked of the running
 * V8 itself, by scanning every code point once per property, so the sets are
 * exactly those of the native engine's Unicode version, and RE2 (which ships
 * its own, possibly newer, tables) is given explicit ranges instead.
 */
import type { AST } from '@eslint-community/regexpp';
import { CodePointSet, MAX_CODE_POINT } from './code-point-set.ts';

/** A node that matches exactly one code point from a set. */
export type CharacterNode = AST.Character | AST.CharacterSet | AST.CharacterClass;

const LINE_TERMINATORS = CodePointSet.of([0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]);

/** `.` without the `s` flag: anything but a line terminator. */
export const DOT = LINE_TERMINATORS.complement();
/** `\d`: ASCII digits (also under `u`). */
export const DIGIT = CodePointSet.of([0x30, 0x39]);
/** `\w`: ASCII word characters (Unicode-aware only with both `u` and `i`). */
export const WORD = CodePointSet.of([0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]);
/** `\s`: WhiteSpace (TAB VT FF SP NBSP ZWNBSP and category Zs) plus LineTerminator. */
export const SPACE = CodePointSet.of(
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
);

/**
 * The set a character node matches.
 *
 * @example
 * charSetOf(parsed `[^\d_]`).has(0x41); // true
 */
export function charSetOf(node: CharacterNode): CodePointSet {
  switch (node.type) {
    case 'Character':
      return CodePointSet.single(node.value);
    case 'CharacterSet':
      return escapeSet(node);
    case 'CharacterClass': {
      let set = CodePointSet.EMPTY;
      for (const element of node.elements) {
        if (element.type === 'Character') set = set.union(CodePointSet.single(element.value));
        else if (element.type === 'CharacterClassRange') {
          set = set.union(CodePointSet.of([element.min.value, element.max.value]));
        } else if (element.type === 'CharacterSet') set = set.union(escapeSet(element));
        else {
          // Nested classes, set operations and string disjunctions exist only
          // under the `v` flag, which tenant patterns never get.
          throw new Error(`unexpected class element ${element.type}`);
        }
      }
      return node.negate ? set.complement() : set;
    }
  }
}

function escapeSet(node: AST.CharacterSet): CodePointSet {
  switch (node.kind) {
    case 'any':
      return DOT;
    case 'digit':
      return node.negate ? DIGIT.complement() : DIGIT;
    case 'word':
      return node.negate ? WORD.complement() : WORD;
    case 'space':
      return node.negate ? SPACE.complement() : SPACE;
    case 'property': {
      if (node.strings) throw new Error('properties of strings need the v flag');
      const set = propertySet(node.raw);
      return node.negate ? set.complement() : set;
    }
  }
}

// Bounded by the finite number of valid property names and values.
const propertyCache = new Map<string, CodePointSet>();
let everyCodePoint: string | undefined;

const SURROGATE_LO = 0xd800;
const SURROGATE_HI = 0xdfff;
const SURROGATE_COUNT = SURROGATE_HI - SURROGATE_LO + 1;

/**
 * Scans all code points with the native engine. The scan text holds every
 * non-surrogate code point in order (adjacent lone surrogates would pair up),
 * so each match of `\p{..}+` is one contiguous range; surrogates are tested
 * one by one. Costs some milliseconds once per distinct property.
 */
function propertySet(raw: string): CodePointSet {
  // `\P{X}` is the complement of `\p{X}`; cache the positive form only.
  const positive = `\\p${raw.slice(2)}`;
  const cached = propertyCache.get(positive);
  if (cached !== undefined) return cached;

  everyCodePoint ??= buildEveryCodePoint();
  const pairs: [number, number][] = [];
  // A single class under `+` runs in linear time on the native engine.
  for (const match of everyCodePoint.matchAll(new RegExp(`${positive}+`, 'gu'))) {
    const lo = indexToCodePoint(match.index);
    const hi = indexToCodePoint(match.index + match[0].length - 1);
    // A run may bridge the surrogate gap of the scan text.
    if (lo < SURROGATE_LO && hi > SURROGATE_HI) pairs.push([lo, SURROGATE_LO - 1], [SURROGATE_HI + 1, hi]);
    else pairs.push([lo, hi]);
  }
  const one = new RegExp(`^${positive}$`, 'u');
  for (let unit = SURROGATE_LO; unit <= SURROGATE_HI; unit++) {
    if (one.test(String.fromCharCode(unit))) pairs.push([unit, unit]);
  }
  const set = CodePointSet.of(...pairs);
  propertyCache.set(positive, set);
  return set;
}

function buildEveryCodePoint(): string {
  const chunks: string[] = [];
  const chunk: number[] = [];
  for (let cp = 0; cp <= MAX_CODE_POINT; cp++) {
    if (cp === SURROGATE_LO) cp = SURROGATE_HI + 1;
    chunk.push(cp);
    if (chunk.length === 4096) {
      chunks.push(String.fromCodePoint(...chunk));
      chunk.length = 0;
    }
  }
  chunks.push(String.fromCodePoint(...chunk));
  return chunks.join('');
}

/** Maps a UTF-16 index of the scan text back to its code point. */
function indexToCodePoint(index: number): number {
  if (index < SURROGATE_LO) return index;
  const bmpAfterGap = 0x10000 - SURROGATE_LO - SURROGATE_COUNT;
  if (index < SURROGATE_LO + bmpAfterGap) return index + SURROGATE_COUNT;
  return 0x10000 + ((index - SURROGATE_LO - bmpAfterGap) >> 1);
}
