/**
 * The rule editor's test panel: a payload, "Test", and what the rule (as
 * it stands in the form, saved or not) makes of it, with the explain
 * trace of POST /rules/test (the TraceTable the stored tests' results use
 * too). Values from the payload are shown as JSON text.
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../api.ts';
import type { RuleTestResult } from '../api-types.ts';
import { FieldProblems, ProblemMessage } from '../components/problem.tsx';
import { TraceTable } from '../components/trace-table.tsx';
import { toApiError } from '../components/use-load.ts';

function json(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value);
}

export interface TestPanelProps {
  /** Runs the rule of the form on a payload; rejects with the API's or the form's errors. */
  run: (payload: unknown) => Promise<RuleTestResult>;
}

export function TestPanel({ run }: TestPanelProps) {
  const [payload, setPayload] = useState('{\n  \n}');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<RuleTestResult | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);

  const test = async (): Promise<void> => {
    setError(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch (caught) {
      setResult(undefined);
      setError(new ApiError(0, 'CONSOLE', 'The payload is not JSON.', [{ path: 'payload', message: caught instanceof Error ? caught.message : 'must be JSON' }]));
      return;
    }
    setBusy(true);
    try {
      setResult(await run(parsed));
    } catch (caught) {
      setResult(undefined);
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  const payloadProblems = error?.errorsAt('payload') ?? [];
  return (
    <section class="test-panel" aria-labelledby="test-panel-heading">
      <h2 id="test-panel-heading">Test the rule</h2>
      <label for="test-payload">payload</label>
      <textarea id="test-payload" spellcheck={false} value={payload} rows={8}
        aria-describedby={payloadProblems.length > 0 ? 'test-payload-problems' : undefined}
        onInput={(event) => setPayload(event.currentTarget.value)} />
      <FieldProblems error={error} field="payload" id="test-payload-problems" />
      <div class="toolbar">
        <button type="button" onClick={() => void test()} disabled={busy}>Test</button>
      </div>
      {error !== undefined && payloadProblems.length === 0 && <ProblemMessage error={error} />}
      <div aria-live="polite">
        {result !== undefined && <TestResult result={result} />}
      </div>
    </section>
  );
}

function TestResult({ result }: { result: RuleTestResult }) {
  return (
    <div class="test-result">
      <p class={result.isValid ? 'verdict ok' : 'verdict failed'}>
        {result.isValid ? 'Valid: the payload passes.' : `Invalid: ${result.failures.length} failure${result.failures.length === 1 ? '' : 's'}.`}
      </p>
      {result.failures.length > 0 && (
        <table class="list">
          <caption>Failures</caption>
          <thead><tr><th scope="col">Rule</th><th scope="col">Message</th><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
          <tbody>
            {result.failures.map((failure, index) => (
              <tr key={index}>
                <td><code>{failure.ruleCode}</code></td>
                <td>{failure.message}</td>
                <td><code>{failure.fieldPath}</code></td>
                <td><code>{json(failure.actualValue)}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {result.trace !== undefined && <TraceTable trace={result.trace} caption="Trace" />}
      {result.warnings.length > 0 && (
        <ul class="field-warnings" aria-label="Warnings">
          {result.warnings.map((warning, index) => <li key={index}><code>{warning.path}</code>: {warning.message}</li>)}
        </ul>
      )}
    </div>
  );
}
