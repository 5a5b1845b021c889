/**
 * The impact report beside the publish button: what publishing the drafts
 * would change for the tenant's recorded traffic (POST …/impact). Shown
 * only while sampling is on (GET /tenant, sampling.rate > 0); it replays
 * samples on the service, so it runs when asked, not on every visit.
 */
import { useState } from 'preact/hooks';
import { segment } from '../api.ts';
import type { Tenant } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { jsonText } from '../components/json-text.ts';
import { ProblemMessage } from '../components/problem.tsx';
import { useAction } from '../components/use-action.ts';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';

interface Verdict {
  readonly isValid: boolean;
  readonly failures: readonly string[];
}

/** The answer of POST /contexts/{context}/impact. */
export interface ImpactReport {
  readonly samples: number;
  readonly unchanged: number;
  readonly becameInvalid: number;
  readonly becameValid: number;
  readonly failuresChanged: number;
  readonly byRule: ReadonlyArray<{ ruleCode: string; newFailures: number; resolvedFailures: number }>;
  readonly examples: ReadonlyArray<{ sampleId: string; recordedAt: string; live: Verdict; target: Verdict }>;
}

function verdictText(verdict: Verdict): string {
  return verdict.isValid ? 'valid' : `invalid (${verdict.failures.join(', ')})`;
}

function SamplePayload({ context, sampleId }: { context: string; sampleId: string }) {
  const { call } = useApp();
  const [sample] = useLoad(() => call<{ payload: unknown }>('GET', `/contexts/${segment(context)}/samples/${segment(sampleId)}`), [context, sampleId]);
  if (sample.state === 'loading') return <p role="status">Loading the payload…</p>;
  if (sample.state === 'failed') return <ProblemMessage error={sample.error} />;
  return <pre>{jsonText(sample.value.payload)}</pre>;
}

/** One example: its sample id (to look it up, or quote it), verdicts, and its payload on demand in a row of the table's width. */
function ExampleRows({ context, example, open, onShow }: {
  context: string;
  example: ImpactReport['examples'][number];
  open: boolean;
  onShow: () => void;
}) {
  return (
    <>
      <tr>
        <th scope="row"><code>{example.sampleId}</code></th>
        <td><time dateTime={example.recordedAt}>{formatTime(example.recordedAt)}</time></td>
        <td>{verdictText(example.live)}</td>
        <td>{verdictText(example.target)}</td>
        <td>
          <button type="button" class="secondary" aria-expanded={open} disabled={open}
            aria-label={`Show payload of sample ${example.sampleId}`} onClick={onShow}>Show payload</button>
        </td>
      </tr>
      {open && (
        <tr class="payload-row">
          <td colSpan={5}>
            <section aria-label={`Payload of sample ${example.sampleId}`}>
              <SamplePayload context={context} sampleId={example.sampleId} />
            </section>
          </td>
        </tr>
      )}
    </>
  );
}

function ImpactView({ context, report }: { context: string; report: ImpactReport }) {
  const [open, setOpen] = useState<string | undefined>(undefined);
  return (
    <>
      <p role="status">
        Of {report.samples} recorded payloads: {report.unchanged} unchanged, {report.becameInvalid} would become invalid,
        {' '}{report.becameValid} would become valid, {report.failuresChanged} would fail other rules.
      </p>
      {report.byRule.length > 0 && (
        <table class="list">
          <caption>Rules whose outcome changes</caption>
          <thead><tr><th scope="col">Rule</th><th scope="col">New failures</th><th scope="col">Resolved failures</th></tr></thead>
          <tbody>
            {report.byRule.map((rule) => (
              <tr key={rule.ruleCode}><th scope="row"><code>{rule.ruleCode}</code></th><td>{rule.newFailures}</td><td>{rule.resolvedFailures}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      {report.examples.length > 0 && (
        <table class="list impact-examples">
          <caption>Examples</caption>
          <thead>
            <tr>
              <th scope="col">Sample</th><th scope="col">Recorded</th><th scope="col">Live</th>
              <th scope="col">After publishing</th><th scope="col">Payload</th>
            </tr>
          </thead>
          <tbody>
            {report.examples.map((example) => (
              <ExampleRows key={example.sampleId} context={context} example={example}
                open={open === example.sampleId} onShow={() => setOpen(example.sampleId)} />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function ImpactPanel({ context, generation }: { context: string; generation: number }) {
  const { call } = useApp();
  const [tenant] = useLoad(() => call<Tenant>('GET', '/tenant'), []);
  const [report, setReport] = useState<{ for: number; value: ImpactReport } | undefined>(undefined);
  const action = useAction();
  const { busy, error } = action;
  if (tenant.state !== 'done' || !(tenant.value.sampling.rate > 0)) return null;

  const run = async (): Promise<void> => {
    const value = await action.run(() => call<ImpactReport>('POST', `/contexts/${segment(context)}/impact`, { body: { target: 'draft' } }));
    if (value !== undefined) setReport({ for: generation, value });
  };
  return (
    <section class="impact" aria-label="Impact on recorded traffic">
      <h2>Impact on recorded traffic</h2>
      <p class="hint">Replays the newest recorded payloads against the live rules and the drafts.</p>
      <button type="button" class="secondary" disabled={busy} onClick={() => void run()}>Show impact</button>
      <ProblemMessage error={error} />
      {/* A report made before the last publish compares with what is no longer live. */}
      {report !== undefined && report.for === generation && <ImpactView context={context} report={report.value} />}
    </section>
  );
}
