/**
 * The tenant's API keys: list (revoked ones too), create one (its secret
 * shown once, with a copy button), revoke one after confirming. The API
 * refuses revoking the last admin key; its words are shown by that key.
 */
import { useRef, useState } from 'preact/hooks';
import { segment } from '../api.ts';
import type { ApiKey, ApiKeyList, CreatedApiKey } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { Pager, pageOf } from '../components/pager.tsx';
import { FieldProblems, ProblemMessage } from '../components/problem.tsx';
import { useAction } from '../components/use-action.ts';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';

/** The secret of a new key, shown this once; "Copy" puts it on the clipboard. */
function NewKey({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | undefined>(undefined);
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select it, so the usual copy keys work.
      field.current?.select();
      setCopied('The browser refused the clipboard: the key is selected, copy it with the keyboard.');
    }
  };
  return (
    <section class="new-key notice" aria-label="Key created">
      <h2>Key “{created.name}” created</h2>
      <p>This is the only time the key is shown: copy it now and keep it somewhere safe.</p>
      <label for="new-key">New key</label>
      <div class="toolbar">
        <input id="new-key" ref={field} class="mono key" readOnly value={created.key} size={60} onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={() => void copy()}>Copy</button>
        <button type="button" class="secondary" onClick={onDone}>Done</button>
      </div>
      {copied !== undefined && <p role="status">{copied}</p>}
    </section>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (created: CreatedApiKey) => void }) {
  const { call } = useApp();
  const [name, setName] = useState('');
  const [role, setRole] = useState<'admin' | 'validator'>('validator');
  const action = useAction();
  const { busy, error } = action;
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const created = await action.run(() => call<CreatedApiKey>('POST', '/api-keys', { body: { name: name.trim(), role } }));
    if (created === undefined) return;
    setName('');
    onCreated(created);
  };
  const nameProblems = (error?.errorsAt('name').length ?? 0) > 0;
  return (
    <form class="create-key" onSubmit={(event) => void submit(event)}>
      <h2>Create a key</h2>
      <div class="toolbar">
        <label for="key-name">Key name</label>
        <input id="key-name" required maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)}
          aria-invalid={nameProblems} aria-describedby={nameProblems ? 'key-name-problems' : undefined} />
        <label for="key-role">Role</label>
        <select id="key-role" value={role} onChange={(event) => setRole(event.currentTarget.value as 'admin' | 'validator')}>
          <option value="validator">validator (validations only)</option>
          <option value="admin">admin (everything in the tenant)</option>
        </select>
        <button type="submit" disabled={busy}>Create key</button>
      </div>
      <FieldProblems error={error} field="name" id="key-name-problems" />
      {error !== undefined && !nameProblems && <ProblemMessage error={error} />}
    </form>
  );
}

function KeyRow({ item, onRevoked }: { item: ApiKey; onRevoked: () => void }) {
  const { call } = useApp();
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const { busy, error } = action;
  const revoke = async (): Promise<void> => {
    if (await action.run(async () => { await call('DELETE', `/api-keys/${segment(item.id)}`); return true; })) {
      setConfirming(false);
      onRevoked();
    }
  };
  return (
    <tr>
      <th scope="row">{item.name}</th>
      <td>{item.role}</td>
      <td><time dateTime={item.createdAt}>{formatTime(item.createdAt)}</time></td>
      <td>{item.lastUsedAt === null ? 'never' : <time dateTime={item.lastUsedAt}>{formatTime(item.lastUsedAt)}</time>}</td>
      <td>{item.revokedAt === null ? 'active' : <>revoked <time dateTime={item.revokedAt}>{formatTime(item.revokedAt)}</time></>}</td>
      <td>
        {item.revokedAt === null && !confirming && (
          <button type="button" class="secondary" aria-label={`Revoke ${item.name}`} onClick={() => setConfirming(true)}>Revoke</button>
        )}
        {confirming && (
          <div class="confirm" role="group" aria-label={`Confirm revoking ${item.name}`}>
            <p>Revoke “{item.name}”? Requests with it are refused from now on.</p>
            <button type="button" class="danger" disabled={busy} onClick={() => void revoke()}>Revoke key</button>{' '}
            <button type="button" class="secondary" onClick={() => { setConfirming(false); action.clear(); }}>Cancel</button>
          </div>
        )}
        <ProblemMessage error={error} />
      </td>
    </tr>
  );
}

export function ApiKeysPage() {
  const { call } = useApp();
  const [keys, reload] = useLoad(() => call<ApiKeyList>('GET', '/api-keys'), []);
  const [created, setCreated] = useState<CreatedApiKey | undefined>(undefined);
  const [page, setPage] = useState(0);
  const items = keys.state === 'done' ? keys.value.items : [];
  return (
    <section>
      <PageHeading title="API keys" />
      {created !== undefined ? (
        <NewKey created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <CreateKeyForm onCreated={(next) => { setCreated(next); reload(); }} />
      )}
      <h2>Keys of the tenant</h2>
      {keys.state === 'loading' && <p role="status">Loading keys…</p>}
      {keys.state === 'failed' && <ProblemMessage error={keys.error} />}
      {keys.state === 'done' && (
        <>
          <table class="list">
            <caption>{items.length} {items.length === 1 ? 'key' : 'keys'}, revoked ones included; secrets are never shown again</caption>
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>
              {pageOf(items, page).map((item) => <KeyRow key={item.id} item={item} onRevoked={reload} />)}
            </tbody>
          </table>
          <Pager label="Key pages" page={page} total={items.length} onPage={setPage} />
        </>
      )}
    </section>
  );
}
