/**
 * A context's "Tests": its stored test cases as JSON (the body of
 * PUT …/tests), "Save" to store them, and "Run tests" against the drafts
 * or the live rules, with each test's result and explain trace. Errors are
 * shown under the text area: the browser's JSON parser's before sending,
 * the API's with the path of the test they are about.
 */
import { useEffect, useState } from 'preact/hooks';
import { segment } from '../api.ts';
import type { StoredTests, TestRunResult } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { jsonText, parseJson } from '../components/json-text.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { TestRunView } from '../components/test-run-view.tsx';
import { useAction } from '../components/use-action.ts';
import { useLoad } from '../components/use-load.ts';
import type { ContextTabProps } from './context-tabs.tsx';

const EXAMPLE = jsonText([{ name: 'a valid payload passes', payload: {}, expect: { isValid: true } }]);

export function TestsTab({ context }: ContextTabProps) {
  const { call } = useApp();
  const path = `/contexts/${segment(context)}/tests`;
  const [stored] = useLoad(() => call<StoredTests>('GET', path), [context]);
  const [text, setText] = useState('');
  const [saved, setSaved] = useState<StoredTests | undefined>(undefined);
  const [parseError, setParseError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [target, setTarget] = useState<'draft' | 'live'>('draft');
  const [run, setRun] = useState<TestRunResult | undefined>(undefined);
  const saving = useAction();
  const running = useAction();
  const saveError = saving.error;
  const busy = saving.busy || running.busy;

  useEffect(() => {
    if (stored.state !== 'done') return;
    setSaved(stored.value);
    setText(jsonText(stored.value.tests));
  }, [stored]);

  const save = async (event: Event): Promise<void> => {
    event.preventDefault();
    setStatus(undefined);
    const parsed = parseJson<StoredTests['tests']>(text);
    setParseError(parsed.ok ? undefined : parsed.message);
    if (!parsed.ok) {
      saving.clear();
      return;
    }
    const answer = await saving.run(() => call<StoredTests>('PUT', path, { body: { tests: parsed.value } }));
    if (answer === undefined) return;
    setSaved(answer);
    setText(jsonText(answer.tests));
    setStatus(`Saved ${answer.tests.length} test${answer.tests.length === 1 ? '' : 's'}.`);
  };

  const runTests = async (): Promise<void> => {
    setRun(await running.run(() => call<TestRunResult>('POST', `${path}/run`, { body: { target, explain: true } })));
  };

  const described = [parseError !== undefined && 'tests-parse-problem', saveError !== undefined && 'tests-problems'].filter(Boolean).join(' ');
  return (
    <section>
      <PageHeading title={`Tests of ${context}`} />
      <p class="hint">
        Each test is a payload and the answer it must get: <code>{'{ "name", "payload", "expect": { "isValid", "failures"? } }'}</code>.
        Stored tests run before every publish and rollback, which they refuse while one fails.
      </p>
      {stored.state === 'loading' && <p role="status">Loading tests…</p>}
      {stored.state === 'failed' && <ProblemMessage error={stored.error} />}
      {stored.state === 'done' && (
        <form onSubmit={(event) => void save(event)}>
          <label for="stored-tests">Stored tests (JSON)</label>
          <textarea id="stored-tests" class="code" rows={16} spellcheck={false} value={text} placeholder={EXAMPLE}
            aria-invalid={parseError !== undefined || saveError !== undefined} aria-describedby={described === '' ? undefined : described}
            onInput={(event) => setText(event.currentTarget.value)} />
          {parseError !== undefined && <p class="field-problems" id="tests-parse-problem" role="alert">{parseError}</p>}
          <ProblemMessage error={saveError} id="tests-problems" />
          <div class="toolbar">
            <button type="submit" disabled={busy}>Save</button>
            {status !== undefined && <span role="status">{status}</span>}
          </div>
        </form>
      )}
      <h2>Run</h2>
      <div class="toolbar">
        <label for="run-target">Run against</label>
        <select id="run-target" value={target} onChange={(event) => setTarget(event.currentTarget.value as 'draft' | 'live')}>
          <option value="draft">the drafts (what publishing would make live)</option>
          <option value="live">the live rules</option>
        </select>
        <button type="button" disabled={busy} onClick={() => void runTests()}>Run tests</button>
      </div>
      <p class="hint">Runs the stored tests as saved, not the text above until it is saved.</p>
      <ProblemMessage error={running.error} />
      {run !== undefined && <TestRunView run={run} tests={saved?.tests} label="Test results" />}
    </section>
  );
}
