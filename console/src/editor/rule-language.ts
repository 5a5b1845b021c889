/**
 * The rule language's highlighting for CodeMirror: a small stream
 * tokenizer (no grammar), enough to tell strings, numbers, comments, the
 * `$` names, functions, fields and operators apart as one types, and the
 * completion and hover help of rule-help.ts. What is allowed is decided by
 * the service (POST /rules/check), not here.
 */
import { HighlightStyle, StreamLanguage, syntaxHighlighting, type StringStream } from '@codemirror/language';
import type { Extension } from '@codemirror/state';
import { tags } from '@lezer/highlight';
import { FUNCTION_RECORDS } from '../../../compiler/language/functions.ts';
import { ruleHelp } from './rule-help.ts';

/** The language's functions (docs/rule-language.md, section 7), from the records the service compiles with. */
const FUNCTIONS: ReadonlySet<string> = new Set(FUNCTION_RECORDS.map((f) => f.name));
const LITERALS = new Set(['true', 'false', 'null']);
const DOLLAR_NAMES = new Set(['$', '$value', '$item', '$index', '$expected']);

interface TokenizerState {
  /** Inside a block comment that goes on past the line. */
  inComment: boolean;
  /** The last token was a `.`: a name after it is a field. */
  afterDot: boolean;
}

function blockComment(stream: StringStream, state: TokenizerState): string {
  while (!stream.eol()) {
    if (stream.match('*/')) {
      state.inComment = false;
      return 'comment';
    }
    stream.next();
  }
  return 'comment';
}

function token(stream: StringStream, state: TokenizerState): string | null {
  if (state.inComment) return blockComment(stream, state);
  if (stream.eatSpace()) return null;
  const afterDot = state.afterDot;
  state.afterDot = false;
  if (stream.match('//')) {
    stream.skipToEnd();
    return 'comment';
  }
  if (stream.match('/*')) {
    state.inComment = true;
    return blockComment(stream, state);
  }
  const quote = stream.peek();
  if (quote === '"' || quote === "'") {
    stream.next();
    let escaped = false;
    for (let next = stream.next(); next !== undefined; next = stream.next()) {
      if (next === quote && !escaped) break;
      escaped = !escaped && next === '\\';
    }
    return 'string';
  }
  if (stream.match(/^(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/)) return 'number';
  const name = stream.match(/^\$?[A-Za-z_][A-Za-z0-9_$]*|^\$/) as RegExpMatchArray | null;
  if (name !== null) {
    const word = name[0];
    if (afterDot) return 'property';
    if (DOLLAR_NAMES.has(word)) return 'variable-2';
    if (LITERALS.has(word)) return 'atom';
    if (FUNCTIONS.has(word) && /^\s*\(/.test(stream.string.slice(stream.pos))) return 'builtin';
    return 'variable';
  }
  if (stream.eat('.')) {
    state.afterDot = true;
    return 'punctuation';
  }
  if (stream.match(/^(?:===|!==|==|!=|<=|>=|&&|\|\||\?\?|\*\*|=>|[-+*/%<>!?:])/)) return 'operator';
  if (stream.match(/^[()[\],;]/)) return 'bracket';
  stream.next();
  return null;
}

const ruleStream = StreamLanguage.define<TokenizerState>({
  name: 'rules',
  startState: () => ({ inComment: false, afterDot: false }),
  copyState: (state) => ({ ...state }),
  token,
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
});

/** Colours that keep at least 4.5:1 contrast on white. */
const highlight = HighlightStyle.define([
  { tag: tags.string, color: '#a31515' },
  { tag: tags.number, color: '#116644' },
  { tag: tags.comment, color: '#5c6370', fontStyle: 'italic' },
  { tag: tags.atom, color: '#0000c0' },
  { tag: tags.special(tags.variableName), color: '#7a1fa2', fontWeight: '600' },
  { tag: tags.standard(tags.variableName), color: '#795e00' },
  { tag: tags.variableName, color: '#1b1f24' },
  { tag: tags.propertyName, color: '#0b4f8a' },
  { tag: tags.operator, color: '#8a3b00' },
]);

/** The language, its colours and its help, for an editor of `expression` or `when`. */
export function ruleLanguage(): Extension {
  return [ruleStream, syntaxHighlighting(highlight), ruleHelp()];
}
