/**
 * The result of running a context's stored tests: how many passed, and
 * per test whether it got what it expects, what it got, and its explain
 * trace when the run asked for one.
 */
import type { StoredTest, TestRunResult } from '../api-types.ts';
import { TraceTable } from './trace-table.tsx';

function expectation(test: StoredTest | undefined): string {
  if (test === undefined) return '';
  if (test.expect.isValid) return 'valid';
  return test.expect.failures === undefined ? 'invalid' : `invalid, failing ${test.expect.failures.join(', ') || 'nothing'}`;
}

export function TestRunView({ run, tests, label }: { run: TestRunResult; tests?: readonly StoredTest[]; label: string }) {
  const byName = new Map((tests ?? []).map((test) => [test.name, test]));
  return (
    <section class="test-run" aria-label={label}>
      <p role="status" class={run.failed > 0 ? 'run-failed' : 'run-passed'}>
        {run.results.length === 0
          ? 'The context has no stored tests.'
          : `${run.passed} passed, ${run.failed} failed against ${describeTarget(run.target)}.`}
      </p>
      {run.results.length > 0 && (
        <table class="list">
          <caption>{label}</caption>
          <thead>
            <tr><th scope="col">Test</th><th scope="col">Result</th>{tests !== undefined && <th scope="col">Expected</th>}<th scope="col">Got</th></tr>
          </thead>
          <tbody>
            {run.results.map((result) => (
              <tr key={result.name}>
                <th scope="row">{result.name}</th>
                <td class={result.ok ? 'ok' : 'not-ok'}>{result.ok ? 'Passed' : 'Failed'}</td>
                {tests !== undefined && <td>{expectation(byName.get(result.name))}</td>}
                <td>
                  {result.isValid ? 'valid' : `invalid, failing ${result.failures.join(', ')}`}
                  {result.trace !== undefined && (
                    <details>
                      <summary>Trace of {result.name}</summary>
                      <TraceTable trace={result.trace} caption={`Trace of ${result.name}`} />
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** What a run ran against, in words: the drafts, the live rules or a numbered version. */
function describeTarget(target: TestRunResult['target']): string {
  if (target === 'draft') return 'the drafts';
  if (target === 'live') return 'the live rules';
  return `version ${String(target)}`;
}
