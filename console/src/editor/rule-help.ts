/**
 * Help while writing an expression, from the language's own records
 * (compiler/language/, the definition the service compiles with): completion
 * of function and method names, each offered with its forms, its
 * documentation line and an example, and the same text when the pointer
 * rests on a function or method name. The documentation is Markdown with
 * `code` and links; it is shown as text with code spans (built with DOM
 * calls, never from markup).
 */
import { autocompletion, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import type { Extension } from '@codemirror/state';
import { hoverTooltip, type EditorView } from '@codemirror/view';
import { FUNCTION_RECORDS } from '../../../compiler/language/functions.ts';
import { CALLBACK_METHOD_RECORDS, VALUE_METHOD_RECORDS } from '../../../compiler/language/methods.ts';

/** What is shown for one name: how it is written, what it gives, an example. */
export interface HelpEntry {
  name: string;
  forms: string[];
  doc: string;
  example: string;
}

const FUNCTION_HELP: ReadonlyMap<string, HelpEntry> = new Map(FUNCTION_RECORDS.map((f) => [f.name, {
  name: f.name, forms: [...f.forms], doc: f.doc, example: f.examples[0],
}]));

const METHOD_HELP: ReadonlyMap<string, HelpEntry> = new Map([...VALUE_METHOD_RECORDS, ...CALLBACK_METHOD_RECORDS].map((m) => [m.name, {
  name: m.name,
  forms: [m.form],
  // One line per kind of receiver, as the docs' table has them.
  doc: m.uses.length === 1 ? m.uses[0].doc : m.uses.map((use) => `on ${use.on === 'array' ? 'an' : 'a'} ${use.on}: ${use.doc}`).join('; '),
  example: m.uses[0].example,
}]));

const DOLLAR_NAMES: readonly Completion[] = [
  { label: '$', type: 'variable', detail: 'the whole payload' },
  { label: '$value', type: 'variable', detail: 'the value at fieldPath' },
  { label: '$item', type: 'variable', detail: 'the element in a forEach rule' },
  { label: '$index', type: 'variable', detail: 'the element\'s index in a forEach rule' },
  { label: '$expected', type: 'variable', detail: 'the rule\'s expected value' },
];

/** Markdown's links as their text: `[section 8](#8-...)` reads "section 8". */
function plain(markdown: string): string {
  return markdown.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
}

/** The documentation as a DOM node: text, with `code` spans. */
export function helpNode(entry: HelpEntry): HTMLElement {
  const box = document.createElement('div');
  box.className = 'rule-help';
  const forms = document.createElement('div');
  forms.className = 'rule-help-forms';
  forms.textContent = entry.forms.join('   ');
  const doc = document.createElement('p');
  plain(entry.doc).split('`').forEach((part, i) => {
    if (i % 2 === 1) {
      const code = document.createElement('code');
      code.textContent = part;
      doc.append(code);
    } else {
      doc.append(part);
    }
  });
  const example = document.createElement('div');
  example.className = 'rule-help-example';
  example.append('Example: ');
  const code = document.createElement('code');
  code.textContent = entry.example;
  example.append(code);
  box.append(forms, doc, example);
  return box;
}

function completion(entry: HelpEntry, type: 'function' | 'method'): Completion {
  return { label: entry.name, type, detail: entry.forms.join(', '), info: () => helpNode(entry) };
}

const FUNCTION_OPTIONS: readonly Completion[] = [...[...FUNCTION_HELP.values()].map((entry) => completion(entry, 'function')), ...DOLLAR_NAMES];
const METHOD_OPTIONS: readonly Completion[] = [...METHOD_HELP.values()].map((entry) => completion(entry, 'method'));

/** Names after a dot are methods; elsewhere, functions and `$`-names. Offered once a letter is typed, or on Ctrl+Space. */
export function ruleCompletions(context: CompletionContext): CompletionResult | null {
  // Grouped and anchored here: matchBefore appends a bare `$`, which would anchor only the last alternative.
  const word = context.matchBefore(/(?:\$?[A-Za-z_][A-Za-z0-9_]*|\$)$/);
  if (word === null) return context.explicit ? { from: context.pos, options: FUNCTION_OPTIONS } : null;
  const afterDot = context.state.sliceDoc(word.from - 1, word.from) === '.';
  return { from: word.from, options: afterDot ? METHOD_OPTIONS : FUNCTION_OPTIONS, validFor: /^\$?[A-Za-z0-9_]*$/ };
}

/** The help for the name under the pointer: a function before `(`, a method after `.`. */
function hoverHelp(view: EditorView, pos: number): { from: number; to: number; entry: HelpEntry } | undefined {
  const word = view.state.wordAt(pos);
  if (word === null) return undefined;
  const name = view.state.sliceDoc(word.from, word.to);
  const afterDot = view.state.sliceDoc(word.from - 1, word.from) === '.';
  const entry = afterDot ? METHOD_HELP.get(name) : FUNCTION_HELP.get(name);
  return entry === undefined ? undefined : { from: word.from, to: word.to, entry };
}

/** Completion and hover documentation for an editor of the rule language. */
export function ruleHelp(): Extension {
  return [
    autocompletion({ override: [ruleCompletions], icons: false }),
    hoverTooltip((view, pos) => {
      const found = hoverHelp(view, pos);
      if (found === undefined) return null;
      return { pos: found.from, end: found.to, above: true, create: () => ({ dom: helpNode(found.entry) }) };
    }),
  ];
}
