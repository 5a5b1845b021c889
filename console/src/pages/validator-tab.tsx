/**
 * The generated validator of a context's live ruleset
 * (GET …/validator), shown as text for reading. The self-contained ES
 * module version is offered for download.
 */
import { useState } from 'preact/hooks';
import { type ApiError, query, segment } from '../api.ts';
import { useApp } from '../app-context.ts';
import { downloadText } from '../components/download.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { toApiError, useLoad } from '../components/use-load.ts';
import type { ContextTabProps } from './context-tabs.tsx';

export function ValidatorTab({ context }: ContextTabProps) {
  const { call } = useApp();
  const path = `/contexts/${segment(context)}/validator`;
  const [source] = useLoad(() => call<string>('GET', `${path}${query({ format: 'source' })}`), [context]);
  const [error, setError] = useState<ApiError | undefined>(undefined);

  const downloadModule = async (): Promise<void> => {
    setError(undefined);
    try {
      const text = await call<string>('GET', `${path}${query({ format: 'module' })}`);
      downloadText(`${context}.validator.mjs`, text, 'text/javascript');
    } catch (caught) {
      setError(toApiError(caught));
    }
  };

  return (
    <section>
      <PageHeading title={`Validator of ${context}`} />
      <p class="hint">The code the service generated from the live rules and runs for each validation; for reading, it needs the service’s helpers to run.</p>
      {source.state === 'loading' && <p role="status">Loading the validator…</p>}
      {source.state === 'failed' && <ProblemMessage error={source.error} />}
      {source.state === 'done' && (
        <>
          <div class="toolbar">
            <button type="button" class="secondary" onClick={() => void downloadModule()}>Download as a module</button>
          </div>
          <ProblemMessage error={error} />
          {/* A scrollable region must be reachable by keyboard to be read. */}
          <pre class="code-view" tabIndex={0} role="region" aria-label="Generated validator code"><code>{source.value}</code></pre>
        </>
      )}
    </section>
  );
}
