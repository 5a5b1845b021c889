/**
 * A context's payload schema: the JSON Schema its payloads follow, used
 * for the rules' warnings only. View it, edit and "Save" it (PUT), or
 * delete it after confirming. The API's refusal names the place in the
 * schema, shown under the text area.
 */
import { useEffect, useState } from 'preact/hooks';
import { segment } from '../api.ts';
import { useApp } from '../app-context.ts';
import { jsonText, parseJson } from '../components/json-text.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { useAction } from '../components/use-action.ts';
import { toApiError, useLoad } from '../components/use-load.ts';
import type { ContextTabProps } from './context-tabs.tsx';

/** The schema, or null when the context has none (the API's 404). */
async function loadSchema(call: ReturnType<typeof useApp>['call'], path: string): Promise<unknown> {
  try {
    return await call<unknown>('GET', path);
  } catch (caught) {
    const refusal = toApiError(caught);
    if (refusal.status === 404 && refusal.code === 'NOT_FOUND') return null;
    throw refusal;
  }
}

export function SchemaTab({ context }: ContextTabProps) {
  const { call } = useApp();
  const path = `/contexts/${segment(context)}/payload-schema`;
  const [generation, setGeneration] = useState(0);
  const [schema] = useLoad(() => loadSchema(call, path), [context, generation]);
  const [text, setText] = useState('');
  const [parseError, setParseError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const { busy, error } = action;

  useEffect(() => {
    if (schema.state === 'done') setText(schema.value === null ? '' : jsonText(schema.value));
  }, [schema]);

  /** Runs a change of the schema; `done` says what happened. */
  const change = async (send: () => Promise<unknown>, done: string): Promise<void> => {
    setStatus(undefined);
    if (await action.run(async () => { await send(); return true; })) {
      setConfirming(false);
      setStatus(done);
      setGeneration((value) => value + 1);
    }
  };

  const save = (event: Event): void => {
    event.preventDefault();
    const parsed = parseJson(text);
    setParseError(parsed.ok ? undefined : parsed.message);
    if (parsed.ok) void change(() => call('PUT', path, { body: parsed.value }), 'Payload schema saved.');
    else action.clear();
  };

  const has = schema.state === 'done' && schema.value !== null;
  const described = [parseError !== undefined && 'schema-parse-problem', error !== undefined && 'schema-problem'].filter(Boolean).join(' ');
  return (
    <section>
      <PageHeading title={`Payload schema of ${context}`} />
      <p class="hint">
        A JSON Schema (draft 2020-12) of the payloads this context validates. It only feeds the rules’ warnings
        (unknown fields, bare names, type mismatches); it never changes a validation’s answer.
      </p>
      {schema.state === 'loading' && <p role="status">Loading the payload schema…</p>}
      {schema.state === 'failed' && <ProblemMessage error={schema.error} />}
      {schema.state === 'done' && (
        <form onSubmit={save}>
          {!has && <p>The context has no payload schema.</p>}
          <label for="payload-schema">Payload schema (JSON)</label>
          <textarea id="payload-schema" class="code" rows={18} spellcheck={false} value={text}
            placeholder={jsonText({ type: 'object', properties: { total: { type: 'number' } } })}
            aria-invalid={parseError !== undefined || error !== undefined} aria-describedby={described === '' ? undefined : described}
            onInput={(event) => setText(event.currentTarget.value)} />
          {parseError !== undefined && <p class="field-problems" id="schema-parse-problem" role="alert">{parseError}</p>}
          <ProblemMessage error={error} id="schema-problem" />
          <div class="toolbar">
            <button type="submit" disabled={busy}>Save</button>
            {has && !confirming && <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(true)}>Delete schema</button>}
            {status !== undefined && <span role="status">{status}</span>}
          </div>
          {confirming && (
            <div class="confirm" role="group" aria-label="Confirm deleting the payload schema">
              <p>Delete the payload schema of {context}? Rules then get no unknown-field or bare-name warnings.</p>
              <button type="button" class="danger" disabled={busy} onClick={() => void change(() => call('DELETE', path), 'Payload schema deleted.')}>Delete</button>{' '}
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
            </div>
          )}
        </form>
      )}
    </section>
  );
}
