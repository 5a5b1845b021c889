/**
 * A CodeMirror editor for `expression` or `when`: the rule language's
 * highlighting, and the errors and warnings of POST /rules/check
 * underlined at their line and column as one types (the check runs a
 * moment after the last keystroke). The editable element is labelled by
 * the field's label and described by the field's text of errors, so it
 * reads like any other form control.
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { linter, type Diagnostic } from '@codemirror/lint';
import { Compartment, EditorState, type Text } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { useEffect, useRef } from 'preact/hooks';
import type { RuleCheckResult } from '../api-types.ts';
import { ruleLanguage } from './rule-language.ts';

/** How long after the last keystroke the check runs, in milliseconds. */
export const CHECK_DELAY_MS = 300;

/** The document offset of a 1-based line and column, kept inside the text. */
function offsetOf(doc: Text, line: number | undefined, column: number | undefined): number {
  const lineInfo = doc.line(Math.min(Math.max(line ?? 1, 1), doc.lines));
  return Math.min(lineInfo.from + Math.max((column ?? 1) - 1, 0), lineInfo.to);
}

/** The check's findings about `field`, as CodeMirror diagnostics: the word at the place, or one character. */
export function diagnosticsFor(result: RuleCheckResult, field: string, state: EditorState): Diagnostic[] {
  const doc = state.doc;
  const range = (line?: number, column?: number): { from: number; to: number } => {
    if (doc.length === 0) return { from: 0, to: 0 };
    let from = offsetOf(doc, line, column);
    if (from >= doc.length) from = doc.length - 1;
    const word = state.wordAt(from);
    return word !== null && word.from === from ? { from, to: word.to } : { from, to: from + 1 };
  };
  const diagnostics: Diagnostic[] = [];
  for (const error of result.errors) {
    if (error.path === field) diagnostics.push({ ...range(error.line, error.column), severity: 'error', message: error.message });
  }
  for (const warning of result.warnings) {
    if (warning.path !== field) continue;
    const suggestion = warning.suggestion === undefined ? '' : ` Suggestion: ${warning.suggestion}`;
    diagnostics.push({ ...range(warning.line, warning.column), severity: 'warning', message: `${warning.message}${suggestion}`, source: warning.code });
  }
  return diagnostics;
}

export interface CodeFieldProps {
  /** The rule field: `expression` or `when`. */
  field: string;
  /** The id of the label element that names the editor. */
  labelledBy: string;
  /** The id of the element listing the field's errors and warnings. */
  describedBy: string;
  /** The text: the editor's at first, and again whenever `revision` changes. */
  value: string;
  /** Changed by the form when it replaces its content from outside (a saved rule read back). */
  revision: number;
  onChange: (value: string) => void;
  /** Checks the rule with this editor's text in place. */
  check: (field: string, text: string) => Promise<RuleCheckResult>;
  /** Shown but not editable (an archived rule); still focusable, so it can be read and selected. */
  readOnly?: boolean;
}

export function CodeField({ field, labelledBy, describedBy, value, revision, onChange, check, readOnly = false }: CodeFieldProps) {
  const host = useRef<HTMLDivElement>(null);
  // The accessible name and description: the description changes as findings come and go.
  const attributes = useRef(new Compartment());
  const contentAttributes = (described: string, locked: boolean) => EditorView.contentAttributes.of({
    'aria-labelledby': labelledBy, 'aria-multiline': 'true', ...(described === '' ? {} : { 'aria-describedby': described }),
    ...(locked ? { 'aria-readonly': 'true' } : {}),
  });
  const editable = useRef(new Compartment());
  const view = useRef<EditorView | undefined>(undefined);
  // The latest callbacks, for an editor made once.
  const latest = useRef({ onChange, check });
  latest.current = { onChange, check };

  useEffect(() => {
    if (host.current === null) return;
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          history(),
          // Tab is left to the page: it moves the focus on rather than trapping it in the editor.
          keymap.of([...defaultKeymap, ...historyKeymap]),
          ruleLanguage(),
          EditorView.lineWrapping,
          attributes.current.of(contentAttributes(describedBy, readOnly)),
          editable.current.of(EditorState.readOnly.of(readOnly)),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString());
          }),
          linter(async (editorView) => {
            const text = editorView.state.doc.toString();
            try {
              const result = await latest.current.check(field, text);
              // Typed on meanwhile: the next run reports on the new text.
              if (editorView.state.doc.toString() !== text) return [];
              return diagnosticsFor(result, field, editorView.state);
            } catch {
              return [];
            }
          }, { delay: CHECK_DELAY_MS }),
        ],
      }),
    });
    view.current = editor;
    return () => editor.destroy();
  // Made once; the text follows `value` below.
  }, []);

  useEffect(() => {
    view.current?.dispatch({
      effects: [attributes.current.reconfigure(contentAttributes(describedBy, readOnly)), editable.current.reconfigure(EditorState.readOnly.of(readOnly))],
    });
  }, [describedBy, readOnly]);

  // The editor owns its text while one types: the form's copy may lag a keystroke behind (effects run after
  // paint), and writing it back would undo what was typed. Only a new revision (the rule saved and read
  // back) replaces the text.
  const shownRevision = useRef(revision);
  useEffect(() => {
    const editor = view.current;
    if (editor === undefined || shownRevision.current === revision) return;
    shownRevision.current = revision;
    if (editor.state.doc.toString() !== value) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
  }, [revision]);

  return <div class="code-field" ref={host} data-field={field} />;
}
