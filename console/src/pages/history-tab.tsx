/**
 * A context's "History": its ruleset versions, newest first, a page at a
 * time, with who made each and its note. Choosing a version shows how it
 * differs from the version before it or from the live one, and offers
 * "Rollback" to it with a note. A rollback refused because stored tests
 * fail (409 TESTS_FAILED) shows the failing tests and offers
 * "Roll back anyway" (?force=true).
 */
import { useState } from 'preact/hooks';
import { query, segment } from '../api.ts';
import type { PublishResult, RulesetDiff, RulesetVersionList, RulesetVersionSummary } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { CursorPager, useCursorPages } from '../components/pager.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { RulesetDiffView } from '../components/ruleset-diff.tsx';
import { useAction } from '../components/use-action.ts';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { changesText, NOTE_MAX } from './changes-tab.tsx';
import type { ContextTabProps } from './context-tabs.tsx';

const VERSIONS_PAGE = 20;

type Compare = 'previous' | 'live';

function VersionDiff({ context, version, compare }: { context: string; version: number; compare: Compare }) {
  const { call } = useApp();
  const from = compare === 'previous' ? version - 1 : 'live';
  const [diff] = useLoad(() => call<RulesetDiff>('GET', `/contexts/${segment(context)}/diff${query({ from, to: version })}`), [context, version, compare]);
  if (diff.state === 'loading') return <p role="status">Loading the differences…</p>;
  if (diff.state === 'failed') return <ProblemMessage error={diff.error} />;
  return <RulesetDiffView diff={diff.value} headingLevel={3} />;
}

function RollbackForm({ context, version, onDone }: { context: string; version: number; onDone: (result: PublishResult) => void }) {
  const { call } = useApp();
  const [note, setNote] = useState('');
  const action = useAction();
  const { busy, error } = action;
  const rollback = async (force: boolean): Promise<void> => {
    const body = note.trim() === '' ? { rulesetVersion: version } : { rulesetVersion: version, note: note.trim() };
    const answer = await action.run(() => call<PublishResult>('POST', `/contexts/${segment(context)}/rollback${query({ force: force || undefined })}`, { body }));
    if (answer !== undefined) onDone(answer);
  };
  const testsFailed = error?.code === 'TESTS_FAILED';
  return (
    <form class="rollback" aria-labelledby="rollback-heading" onSubmit={(event) => { event.preventDefault(); void rollback(false); }}
      aria-describedby={error === undefined ? undefined : 'rollback-problem'}>
      <h3 id="rollback-heading">Roll back to version {version}</h3>
      <p class="hint">Makes the rules of version {version} live again, as a new version. Drafts never published are left alone.</p>
      <label for="rollback-note">note</label>
      <textarea id="rollback-note" maxLength={NOTE_MAX} value={note} onInput={(event) => setNote(event.currentTarget.value)} />
      <div class="toolbar">
        <button type="submit" disabled={busy}>Rollback</button>
        {testsFailed && <button type="button" class="danger" disabled={busy} onClick={() => void rollback(true)}>Roll back anyway</button>}
      </div>
      <ProblemMessage error={error} id="rollback-problem" />
    </form>
  );
}

function VersionPanel({ context, version, live, onRolledBack }: {
  context: string; version: RulesetVersionSummary; live: number | undefined; onRolledBack: (result: PublishResult) => void;
}) {
  const n = version.rulesetVersion;
  const [compare, setCompare] = useState<Compare>(n > 1 ? 'previous' : 'live');
  const isLive = live === n;
  return (
    <section class="version-panel" aria-label={`Version ${n}`}>
      <h2>Version {n}{isLive ? ' (live)' : ''}</h2>
      <label for="compare-with">Compare with</label>{' '}
      <select id="compare-with" value={compare} onChange={(event) => setCompare(event.currentTarget.value as Compare)}>
        {n > 1 && <option value="previous">version {n - 1} (what version {n} changed)</option>}
        <option value="live">the live version (what a rollback would change)</option>
      </select>
      <VersionDiff context={context} version={n} compare={compare} />
      {isLive ? <p>This version is live.</p> : <RollbackForm key={n} context={context} version={n} onDone={onRolledBack} />}
    </section>
  );
}

export function HistoryTab({ context }: ContextTabProps) {
  const { call } = useApp();
  const pages = useCursorPages();
  const [generation, setGeneration] = useState(0);
  const base = `/contexts/${segment(context)}/versions`;
  const [versions] = useLoad(() => call<RulesetVersionList>('GET', `${base}${query({ limit: VERSIONS_PAGE, cursor: pages.cursor })}`), [context, pages.cursor, generation]);
  const [newest] = useLoad(() => call<RulesetVersionList>('GET', `${base}${query({ limit: 1 })}`), [context, generation]);
  const live = newest.state === 'done' ? newest.value.items[0]?.rulesetVersion : undefined;
  const [selected, setSelected] = useState<RulesetVersionSummary | undefined>(undefined);
  const [done, setDone] = useState<PublishResult | undefined>(undefined);

  const rolledBack = (result: PublishResult): void => {
    setDone(result);
    setSelected(undefined);
    pages.reset();
    setGeneration((value) => value + 1);
  };

  return (
    <section>
      <PageHeading title={`History of ${context}`} />
      {done !== undefined && (
        <p class="notice" role="status">Rolled back: version {done.rulesetVersion} is live ({changesText(done.changes)}).</p>
      )}
      {versions.state === 'loading' && <p role="status">Loading versions…</p>}
      {versions.state === 'failed' && <ProblemMessage error={versions.error} />}
      {versions.state === 'done' && versions.value.items.length === 0 && <p>The context was never published: it has no versions yet.</p>}
      {versions.state === 'done' && versions.value.items.length > 0 && (
        <>
          <table class="list">
            <caption>Ruleset versions, newest first</caption>
            <thead>
              <tr><th scope="col">Version</th><th scope="col">Action</th><th scope="col">Note</th><th scope="col">Rules</th><th scope="col">When</th><th scope="col">By</th></tr>
            </thead>
            <tbody>
              {versions.value.items.map((version) => (
                <tr key={version.rulesetVersion}>
                  <th scope="row">
                    <button type="button" class="link" aria-pressed={selected?.rulesetVersion === version.rulesetVersion}
                      onClick={() => setSelected(version)}>
                      Version {version.rulesetVersion}
                    </button>
                    {version.rulesetVersion === live && <span class="badge live">live</span>}
                  </th>
                  <td>{version.action}</td>
                  <td class="note">{version.note ?? ''}</td>
                  <td>{version.rules}</td>
                  <td><time dateTime={version.createdAt}>{formatTime(version.createdAt)}</time></td>
                  <td>{version.actor?.keyName ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager label="History pages" pages={pages} nextCursor={versions.value.nextCursor} />
        </>
      )}
      {selected !== undefined && (
        <VersionPanel key={selected.rulesetVersion} context={context} version={selected} live={live} onRolledBack={rolledBack} />
      )}
    </section>
  );
}
