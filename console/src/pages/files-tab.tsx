/**
 * A context's rules file (format rules/v1): "Export" downloads it, live or
 * drafts; "Import" takes one ("Rules file"), first shows the plan of a dry
 * run (rules created, updated, archived, unchanged, and warnings), then
 * applies it with the options chosen (prune, publish). A refused file's
 * errors name their place in it (`rules[3].expression`).
 */
import { useEffect, useState } from 'preact/hooks';
import { type ApiError, query, segment } from '../api.ts';
import type { ImportResult, RulesFile } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { downloadText } from '../components/download.ts';
import { parseJson } from '../components/json-text.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { toApiError } from '../components/use-load.ts';
import { WarningItems } from '../components/warning-list.tsx';
import type { ContextTabProps } from './context-tabs.tsx';

function ExportForm({ context }: { context: string }) {
  const { call } = useApp();
  const [from, setFrom] = useState<'live' | 'draft'>('live');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const run = async (event: Event): Promise<void> => {
    event.preventDefault();
    setError(undefined);
    setStatus(undefined);
    try {
      const file = await call<RulesFile>('GET', `/contexts/${segment(context)}/export${query({ from })}`);
      const name = `${context}${from === 'draft' ? '.draft' : ''}.rules.json`;
      downloadText(name, `${JSON.stringify(file, null, 2)}\n`, 'application/json');
      setStatus(`Downloaded ${name}: ${file.rules.length} rules, ${file.tests.length} tests.`);
    } catch (caught) {
      setError(toApiError(caught));
    }
  };
  return (
    <form onSubmit={(event) => void run(event)} aria-describedby={error === undefined ? undefined : 'export-problem'}>
      <h2>Export</h2>
      <div class="toolbar">
        <label for="export-from">Rules</label>
        <select id="export-from" value={from} onChange={(event) => setFrom(event.currentTarget.value as 'live' | 'draft')}>
          <option value="live">live</option>
          <option value="draft">drafts (what publishing would make live)</option>
        </select>
        <button type="submit">Export</button>
        {status !== undefined && <span role="status">{status}</span>}
      </div>
      <ProblemMessage error={error} id="export-problem" />
    </form>
  );
}

function CodeList({ title, codes }: { title: string; codes: readonly string[] }) {
  return (
    <div class="plan-group">
      <h4>{title} ({codes.length})</h4>
      {codes.length === 0 ? <p>none</p> : <ul>{codes.map((code) => <li key={code}><code>{code}</code></li>)}</ul>}
    </div>
  );
}

function Plan({ result }: { result: ImportResult }) {
  return (
    <section class="plan" aria-label={result.dryRun ? 'Import plan' : 'Import result'}>
      <h3>{result.dryRun ? 'What importing would do' : 'What the import did'}</h3>
      <div class="plan-groups">
        <CodeList title={result.dryRun ? 'Create' : 'Created'} codes={result.create} />
        <CodeList title={result.dryRun ? 'Update' : 'Updated'} codes={result.update} />
        <CodeList title={result.dryRun ? 'Archive' : 'Archived'} codes={result.archive} />
        <CodeList title="Unchanged" codes={result.unchanged} />
      </div>
      {!result.dryRun && <p>Live version: {result.rulesetVersion ?? 'none'}.</p>}
      <h4>Warnings</h4>
      {result.warnings.length === 0 ? <p>No warnings.</p> : <WarningItems warnings={result.warnings} label="Warnings of the file" />}
    </section>
  );
}

function ImportForm({ context }: { context: string }) {
  const { call } = useApp();
  const [document, setDocument] = useState<unknown>(undefined);
  const [fileError, setFileError] = useState<string | undefined>(undefined);
  const [prune, setPrune] = useState(false);
  const [publish, setPublish] = useState(false);
  const [plan, setPlan] = useState<ImportResult | undefined>(undefined);
  const [result, setResult] = useState<ImportResult | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const send = (dryRun: boolean, force = false): Promise<ImportResult> => call<ImportResult>(
    'POST',
    `/contexts/${segment(context)}/import${query({ dryRun: dryRun || undefined, prune: prune || undefined, publish: publish || undefined, force: force || undefined })}`,
    { body: document },
  );

  // The plan follows the file and the options: a dry run each time one changes.
  useEffect(() => {
    if (document === undefined) return;
    let current = true;
    setPlan(undefined);
    setError(undefined);
    send(true).then(
      (answer) => { if (current) setPlan(answer); },
      (caught: unknown) => { if (current) setError(toApiError(caught)); },
    );
    return () => { current = false; };
  }, [document, prune, publish]);

  const choose = async (input: HTMLInputElement): Promise<void> => {
    setResult(undefined);
    setPlan(undefined);
    setError(undefined);
    const file = input.files?.[0];
    if (file === undefined) {
      setDocument(undefined);
      return;
    }
    const parsed = parseJson(await file.text());
    if (parsed.ok) {
      setFileError(undefined);
      setDocument(parsed.value);
    } else {
      setDocument(undefined);
      setFileError(`${file.name}: ${parsed.message}`);
    }
  };

  const apply = async (force: boolean): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      setResult(await send(false, force));
      setPlan(undefined);
      setDocument(undefined);
    } catch (caught) {
      setError(toApiError(caught));
    } finally {
      setBusy(false);
    }
  };

  const described = [fileError !== undefined && 'import-file-problem', error !== undefined && 'import-problem'].filter(Boolean).join(' ');
  return (
    <form onSubmit={(event) => { event.preventDefault(); void apply(false); }}>
      <h2>Import</h2>
      <p class="hint">
        Makes the drafts of {context} equal to the file, rules matched by code; its payload schema and tests, when it has them,
        replace the context’s. The plan is shown before anything changes.
      </p>
      <label for="rules-file">Rules file</label>{' '}
      <input id="rules-file" type="file" accept="application/json,.json"
        aria-invalid={fileError !== undefined || error !== undefined} aria-describedby={described === '' ? undefined : described}
        onChange={(event) => void choose(event.currentTarget)} />
      {fileError !== undefined && <p class="field-problems" id="import-file-problem" role="alert">{fileError}</p>}
      <fieldset class="options">
        <legend>Options</legend>
        <label><input type="checkbox" checked={prune} onChange={(event) => setPrune(event.currentTarget.checked)} /> Archive rules the file does not have (prune)</label>
        <label><input type="checkbox" checked={publish} onChange={(event) => setPublish(event.currentTarget.checked)} /> Publish in the same step (publish)</label>
      </fieldset>
      <ProblemMessage error={error} id="import-problem" />
      {document !== undefined && plan === undefined && error === undefined && <p role="status">Working out the plan…</p>}
      {plan !== undefined && <Plan result={plan} />}
      <div class="toolbar">
        <button type="submit" disabled={busy || plan === undefined}>Import</button>
        {error?.code === 'TESTS_FAILED' && plan !== undefined && (
          <button type="button" class="danger" disabled={busy} onClick={() => void apply(true)}>Import anyway</button>
        )}
      </div>
      {result !== undefined && (
        <>
          <p class="notice" role="status">Imported: {result.create.length} created, {result.update.length} updated, {result.archive.length} archived.</p>
          <Plan result={result} />
        </>
      )}
    </form>
  );
}

export function FilesTab({ context }: ContextTabProps) {
  return (
    <section>
      <PageHeading title={`Rules file of ${context}`} />
      <p class="hint">The context’s rules, payload schema and stored tests as one JSON document, to keep in version control or import elsewhere.</p>
      <ExportForm context={context} />
      <ImportForm context={context} />
    </section>
  );
}
