/**
 * A context's "Changes": what publishing would change (the draft-vs-live
 * diff, per rule), the drafts' warnings and the stored tests' result
 * against the drafts, then "Publish" with a note. A publish refused
 * because stored tests fail (409 TESTS_FAILED) shows the failing tests and
 * offers "Publish anyway", which publishes with ?force=true and the note.
 */
import { useState } from 'preact/hooks';
import { query, segment } from '../api.ts';
import type { PublishResult, Rule, RulePage, RulesetDiff, TestRunResult } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { RulesetDiffView } from '../components/ruleset-diff.tsx';
import { TestRunView } from '../components/test-run-view.tsx';
import { useAction } from '../components/use-action.ts';
import { useLoad } from '../components/use-load.ts';
import { WarningList, type RuleWarnings } from '../components/warning-list.tsx';
import { ImpactPanel } from './impact-panel.tsx';
import type { ContextTabProps } from './context-tabs.tsx';

/** Drafts whose warnings are fetched one by one; past this many the page says how many it left out. */
const WARNED_DRAFTS = 50;

export const NOTE_MAX = 500;

/** "added A, B; changed C" from a publish answer. */
export function changesText(changes: PublishResult['changes']): string {
  const parts = (['added', 'changed', 'removed'] as const)
    .filter((kind) => changes[kind].length > 0)
    .map((kind) => `${kind} ${changes[kind].join(', ')}`);
  return parts.length === 0 ? 'nothing changed' : parts.join('; ');
}

/** The drafts' warnings: lists carry none, so each draft is read on its own. */
function useDraftWarnings(context: string, generation: number) {
  const { call } = useApp();
  return useLoad(async (): Promise<{ rules: RuleWarnings[]; total: number }> => {
    const page = await call<RulePage>('GET', `/rules${query({ context, status: 'draft', limit: 500 })}`);
    const drafts = page.items.slice(0, WARNED_DRAFTS);
    const rules = await Promise.all(drafts.map((rule) => call<Rule>('GET', `/rules/${segment(rule.id)}`)));
    return { rules: rules.map((rule) => ({ code: rule.code, warnings: rule.warnings ?? [] })), total: page.items.length };
  }, [context, generation])[0];
}

export function ChangesTab({ context }: ContextTabProps) {
  const { call } = useApp();
  const [generation, setGeneration] = useState(0);
  const [diff] = useLoad(() => call<RulesetDiff>('GET', `/contexts/${segment(context)}/diff${query({ from: 'live', to: 'draft' })}`), [context, generation]);
  const warnings = useDraftWarnings(context, generation);
  const [tests] = useLoad(() => call<TestRunResult>('POST', `/contexts/${segment(context)}/tests/run`, { body: { target: 'draft' } }), [context, generation]);
  const [note, setNote] = useState('');
  const action = useAction();
  const { busy, error } = action;
  const [published, setPublished] = useState<PublishResult | undefined>(undefined);

  const publish = async (force: boolean): Promise<void> => {
    setPublished(undefined);
    const answer = await action.run(() => call<PublishResult>('POST', `/contexts/${segment(context)}/publish${query({ force: force || undefined })}`, {
      body: note.trim() === '' ? {} : { note: note.trim() },
    }));
    if (answer === undefined) return;
    setPublished(answer);
    setNote('');
    setGeneration((value) => value + 1);
  };
  const testsFailed = error?.code === 'TESTS_FAILED';

  return (
    <section>
      <PageHeading title={`Changes of ${context}`} />
      <p class="hint">What publishing the context would make live, compared with what is live now.</p>
      {diff.state === 'loading' && <p role="status">Loading the differences…</p>}
      {diff.state === 'failed' && <ProblemMessage error={diff.error} />}
      {diff.state === 'done' && <RulesetDiffView diff={diff.value} />}

      <h2>Warnings of the drafts</h2>
      {warnings.state === 'loading' && <p role="status">Loading warnings…</p>}
      {warnings.state === 'failed' && <ProblemMessage error={warnings.error} />}
      {warnings.state === 'done' && (
        <>
          {warnings.value.total === 0 ? <p>No drafts.</p> : <WarningList rules={warnings.value.rules} label="Warnings of the drafts" />}
          {warnings.value.total > warnings.value.rules.length && (
            <p class="hint">Warnings of the first {warnings.value.rules.length} of {warnings.value.total} drafts.</p>
          )}
        </>
      )}

      <h2>Stored tests against the drafts</h2>
      {tests.state === 'loading' && <p role="status">Running the stored tests…</p>}
      {tests.state === 'failed' && <ProblemMessage error={tests.error} />}
      {tests.state === 'done' && <TestRunView run={tests.value} label="Stored tests against the drafts" />}

      <div class="publish-row">
        <form class="publish" aria-labelledby="publish-heading" onSubmit={(event) => { event.preventDefault(); void publish(false); }}
          aria-describedby={error === undefined ? undefined : 'publish-problem'}>
          <h2 id="publish-heading">Publish</h2>
          <label for="publish-note">note</label>
          <textarea id="publish-note" maxLength={NOTE_MAX} value={note} onInput={(event) => setNote(event.currentTarget.value)}
            placeholder="Why this goes live (kept with the version)" />
          <div class="toolbar">
            <button type="submit" disabled={busy}>Publish</button>
            {testsFailed && (
              <button type="button" class="danger" disabled={busy} onClick={() => void publish(true)}>Publish anyway</button>
            )}
          </div>
          <ProblemMessage error={error} id="publish-problem" />
          {testsFailed && (
            <p class="hint">“Publish anyway” publishes although stored tests fail; the version’s note records which failed.</p>
          )}
          {published !== undefined && (
            <p class="notice" role="status">
              {published.published.length === 0
                ? `Nothing to publish: version ${published.rulesetVersion} stays live.`
                : `Published version ${published.rulesetVersion}: ${changesText(published.changes)}.`}
            </p>
          )}
        </form>
      </div>
      {/* Below the publish form, at the page's width: its examples are tables of payloads. */}
      <ImpactPanel context={context} generation={generation} />
    </section>
  );
}
