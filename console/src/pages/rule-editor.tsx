/**
 * The rule editor: every field of the rule, `expression` and `when` in
 * code editors checked as one types, "Save" (POST for a new rule, PUT with
 * the version the edit is based on otherwise), and the test panel. The
 * API's errors are shown under the field they name, in its words; each
 * control is labelled by its field's name. "Archive" (after confirming)
 * archives a rule; an archived rule is shown read-only, as the API refuses
 * its edits, with "Restore" to make it a draft again.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, segment } from '../api.ts';
import type { Rule, RuleCheckResult, RuleTestResult } from '../api-types.ts';
import { useApp } from '../app-context.ts';
import { PageHeading } from '../components/page-heading.tsx';
import { ProblemMessage } from '../components/problem.tsx';
import { useAction } from '../components/use-action.ts';
import { toApiError, useLoad } from '../components/use-load.ts';
import { CHECK_DELAY_MS, CodeField } from '../editor/code-field.tsx';
import { ruleStatusText } from '../format.ts';
import { RuleChecker } from '../editor/rule-checker.ts';
import { emptyRuleForm, formToRule, ruleToForm, SEVERITIES, type RuleForm } from '../editor/rule-form.ts';
import { TableGrid } from '../editor/table-grid.tsx';
import { starterTable } from '../editor/table-form.ts';
import { TestPanel } from '../editor/test-panel.tsx';
import { href, navigate } from '../router.ts';

/** Why an existing rule's code is read-only. */
const CODE_FIXED_HINT = 'A rule’s code cannot change once it exists: failures, tests and history name the rule by it. '
  + 'For another code, create a rule and archive this one.';

/** A rule read from the API, with its warnings. */
type LoadedRule = Rule;

/** An existing rule, loaded by id. */
export function RulePage({ id }: { id: string }) {
  const { call } = useApp();
  const [loaded] = useLoad(() => call<LoadedRule>('GET', `/rules/${segment(id)}`), [id]);
  if (loaded.state === 'loading') return <p role="status">Loading the rule…</p>;
  if (loaded.state === 'failed') {
    return (
      <section>
        <PageHeading title="Rule" />
        <ProblemMessage error={loaded.error} />
      </section>
    );
  }
  return <RuleEditor key={loaded.value.id} initial={loaded.value} />;
}

/** A new rule, in `context` when the route names one. */
export function NewRulePage({ context }: { context: string | undefined }) {
  return <RuleEditor key={`new:${context ?? ''}`} context={context} />;
}

/** Every message about one field: from the last save, and from the live check. */
function findingsFor(field: string, saveError: ApiError | undefined, check: RuleCheckResult | undefined, showCheck: boolean) {
  // An error placed inside the field (`schema.properties.street.minLenght`) says where.
  const inside = (path: string): string => (path === field ? '' : `${path}: `);
  const errors = (saveError?.errorsAt(field) ?? []).map((entry) => `${inside(entry.path)}${entry.message}`);
  const warnings: string[] = [];
  if (showCheck && check !== undefined) {
    for (const entry of check.errors) {
      if (entry.path !== field && !entry.path.startsWith(`${field}.`) && !entry.path.startsWith(`${field}[`)) continue;
      const place = entry.path === field ? `line ${entry.line}, column ${entry.column}: ` : inside(entry.path);
      if (!errors.some((message) => message.endsWith(entry.message))) errors.push(`${place}${entry.message}`);
    }
    for (const warning of check.warnings) {
      if (warning.path !== field) continue;
      const place = warning.line === undefined ? '' : `line ${warning.line}, column ${warning.column ?? 1}: `;
      warnings.push(`${place}${warning.message}${warning.suggestion === undefined ? '' : ` (suggestion: ${warning.suggestion})`}`);
    }
  }
  return { errors, warnings };
}

interface FieldProps {
  field: string;
  saveError: ApiError | undefined;
  check: RuleCheckResult | undefined;
  /** Show the live check's findings (not for fields left empty on a new rule). */
  showCheck: boolean;
  hint?: string;
  /** The control; gets `id`, and `aria-describedby` from `describedBy`. */
  children: (ids: { id: string; labelId: string; describedBy: string | undefined }) => ComponentChildren;
}

function Field({ field, saveError, check, showCheck, hint, children }: FieldProps) {
  const id = `rule-${field}`;
  const { errors, warnings } = findingsFor(field, saveError, check, showCheck);
  const describedIds = [hint !== undefined ? `${id}-hint` : '', errors.length + warnings.length > 0 ? `${id}-findings` : ''].filter((part) => part !== '');
  return (
    <div class={`field field-${field}${errors.length > 0 ? ' has-errors' : ''}`}>
      <label id={`${id}-label`} for={id}>{field}</label>
      {hint !== undefined && <small id={`${id}-hint`} class="hint">{hint}</small>}
      {children({ id, labelId: `${id}-label`, describedBy: describedIds.length > 0 ? describedIds.join(' ') : undefined })}
      {errors.length + warnings.length > 0 && (
        <ul id={`${id}-findings`} class="findings">
          {errors.map((message, index) => <li key={`e${index}`} class="finding-error">Error: {message}</li>)}
          {warnings.map((message, index) => <li key={`w${index}`} class="finding-warning">Warning: {message}</li>)}
        </ul>
      )}
    </div>
  );
}

function RuleEditor({ initial, context }: { initial?: LoadedRule; context?: string }) {
  const { call } = useApp();
  const [rule, setRule] = useState<LoadedRule | undefined>(initial);
  const [form, setForm] = useState<RuleForm>(() => (initial !== undefined ? ruleToForm(initial) : emptyRuleForm(context)));
  const [saveError, setSaveError] = useState<ApiError | undefined>(undefined);
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const [saving, setSaving] = useState(false);
  const [check, setCheck] = useState<RuleCheckResult | undefined>(undefined);
  // The keys of the table's rows when the shown check was asked: its findings stay with their rows as rows move.
  const [checkedRowKeys, setCheckedRowKeys] = useState<readonly number[] | undefined>(undefined);
  const rowKeysOfBody = useRef(new WeakMap<object, readonly number[]>());
  // Raised when the form is replaced by a rule read back, so the code editors take the new text.
  const [revision, setRevision] = useState(0);
  const isNew = rule === undefined;
  const archived = rule?.status === 'archived';
  const [confirmingArchive, setConfirmingArchive] = useState(false);
  const lifecycle = useAction();

  const formRef = useRef(form);
  formRef.current = form;
  const checker = useMemo(
    () => new RuleChecker((body) => call<RuleCheckResult>('POST', '/rules/check', { body: { rule: body } }), (result, body) => {
      setCheck(result);
      setCheckedRowKeys(rowKeysOfBody.current.get(body));
    }),
    [call],
  );
  /** The form as a rule body, with `field` replaced by `text` (an editor's latest text). */
  const bodyWith = (field?: string, text?: string): Record<string, unknown> => {
    let next = field === undefined ? formRef.current : { ...formRef.current, [field]: text };
    // A save refuses an empty code or name before it looks at the expressions: the check gets stand-ins,
    // so the expressions are checked from the first keystroke (the save still asks for the real ones).
    if (next.code.trim() === '') next = { ...next, code: 'NEW_RULE' };
    if (next.name.trim() === '') next = { ...next, name: 'New rule' };
    const body = formToRule(next);
    // A field the form cannot parse yet (JSON half typed) is left out of the check.
    const rest = body.ok ? body : formToRule({ ...next, schema: '', expectedValue: '', priority: '0' });
    if (!rest.ok) return {};
    if (next.table !== undefined) rowKeysOfBody.current.set(rest.rule, next.table.rows.map((row) => row.key));
    return rest.rule;
  };
  const checkField = (field: string, text: string): Promise<RuleCheckResult> => checker.check(bodyWith(field, text));

  // The whole form is checked a moment after each change too (warnings on fieldPath, forEach, message).
  useEffect(() => {
    const timer = setTimeout(() => { checker.check(bodyWith()).catch(() => undefined); }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, [form, checker]);

  const set = <K extends keyof RuleForm>(field: K, value: RuleForm[K]): void => {
    setSaved(undefined);
    setForm((before) => ({ ...before, [field]: value }));
  };

  /** Shows `next`, read back from the API, in place of the form's content. */
  const showRule = (next: LoadedRule): void => {
    setRule(next);
    setForm(ruleToForm(next));
    setRevision((before) => before + 1);
    setSaveError(undefined);
  };

  const save = async (): Promise<void> => {
    // The API refuses edits of an archived rule; its form has no Save button, and Enter does nothing either.
    if (archived) return;
    setSaved(undefined);
    const body = formToRule(form);
    if (!body.ok) {
      setSaveError(new ApiError(0, 'CONSOLE', 'Some fields cannot be read.', body.errors));
      return;
    }
    setSaving(true);
    setSaveError(undefined);
    try {
      if (rule === undefined) {
        const created = await call<LoadedRule>('POST', '/rules', { body: body.rule });
        navigate(href.rule(created.id));
        return;
      }
      const updated = await call<LoadedRule>('PUT', `/rules/${segment(rule.id)}`, {
        body: { ...body.rule, context: rule.context, code: rule.code, version: rule.version },
      });
      showRule(updated);
      setSaved(updated.version === rule.version ? 'Nothing changed.' : `Saved as version ${updated.version} (a draft until published).`);
    } catch (caught) {
      setSaveError(toApiError(caught));
    } finally {
      setSaving(false);
    }
  };

  const archive = async (id: string): Promise<void> => {
    setSaved(undefined);
    const after = await lifecycle.run(async () => {
      await call('DELETE', `/rules/${segment(id)}`);
      return call<LoadedRule>('GET', `/rules/${segment(id)}`);
    });
    if (after === undefined) return;
    setConfirmingArchive(false);
    showRule(after);
    setSaved('Archived: the rule is no longer evaluated, and its code is free for another rule.');
  };

  const restore = async (id: string): Promise<void> => {
    setSaved(undefined);
    const after = await lifecycle.run(() => call<LoadedRule>('POST', `/rules/${segment(id)}/restore`));
    if (after === undefined) return;
    showRule(after);
    setSaved(`Restored as version ${after.version}, a draft: nothing is live until it is published.`);
  };

  const runTest = async (payload: unknown): Promise<RuleTestResult> => {
    const body = formToRule(formRef.current);
    if (!body.ok) throw new ApiError(0, 'CONSOLE', 'Some fields cannot be read.', body.errors);
    try {
      return await call<RuleTestResult>('POST', '/rules/test', { body: { rule: body.rule, payload, explain: true } });
    } catch (caught) {
      const refusal = toApiError(caught);
      // The rule's own errors (`rule.expression`) go under its fields, as a save's would.
      const ruleErrors = refusal.errors.filter((entry) => entry.path.startsWith('rule.')).map((entry) => ({ ...entry, path: entry.path.slice(5) }));
      if (ruleErrors.length > 0) setSaveError(new ApiError(refusal.status, refusal.code, refusal.detail, ruleErrors));
      throw refusal;
    }
  };

  const contextName = rule?.context ?? context;
  const common = { saveError, check };
  const shown = (field: keyof RuleForm): boolean => !isNew || form[field] !== '';
  const text = (field: 'code' | 'name' | 'errorCode' | 'fieldPath' | 'forEach' | 'expectedValue' | 'tags' | 'context', hint?: string, readOnly = false) => (
    <Field field={field} {...common} showCheck={shown(field)} hint={hint}>
      {({ id, describedBy }) => (
        <input id={id} type="text" spellcheck={false} value={form[field]} readOnly={readOnly || archived} aria-describedby={describedBy}
          aria-invalid={saveError?.errorsAt(field).length ? 'true' : undefined}
          onInput={(event) => set(field, event.currentTarget.value)} />
      )}
    </Field>
  );
  const area = (field: 'description' | 'message' | 'schema', hint?: string, rows = 3) => (
    <Field field={field} {...common} showCheck={shown(field)} hint={hint}>
      {({ id, describedBy }) => (
        <textarea id={id} spellcheck={field === 'description'} rows={rows} value={form[field]} readOnly={archived} aria-describedby={describedBy}
          aria-invalid={saveError?.errorsAt(field).length ? 'true' : undefined}
          onInput={(event) => set(field, event.currentTarget.value)} />
      )}
    </Field>
  );
  const code = (field: 'expression' | 'when', hint: string) => (
    <Field field={field} {...common} showCheck hint={hint}>
      {({ labelId, describedBy }) => (
        <CodeField field={field} labelledBy={labelId} describedBy={describedBy ?? ''} value={form[field]} revision={revision}
          onChange={(value) => set(field, value)} check={checkField} readOnly={archived} />
      )}
    </Field>
  );
  const flag = (field: 'required' | 'enabled', hint: string) => (
    <Field field={field} {...common} showCheck hint={hint}>
      {({ id, describedBy }) => (
        <input id={id} type="checkbox" checked={form[field]} disabled={archived} aria-describedby={describedBy} onChange={(event) => set(field, event.currentTarget.checked)} />
      )}
    </Field>
  );

  return (
    <section class="rule-editor">
      {contextName !== undefined && (
        <p class="breadcrumb">
          <a href={href.contexts()}>Contexts</a> › <a href={href.context(contextName)}>{contextName}</a> › <span>{rule?.code ?? 'new rule'}</span>
        </p>
      )}
      <PageHeading title={rule === undefined ? 'New rule' : `Rule ${rule.code}`} />
      {rule !== undefined && (
        <p class="rule-status">
          Status <strong>{ruleStatusText(rule)}</strong> · version {rule.version} · live version {rule.publishedVersion ?? 'none'}
        </p>
      )}
      {rule !== undefined && archived && (
        <div class="notice archived-notice" role="group" aria-label="Archived rule">
          <p>
            This rule is <strong>archived</strong>: it is not evaluated, and its fields cannot be edited. Restore it to make it
            a draft again (it goes live only when published).
          </p>
          <div class="toolbar">
            <button type="button" disabled={lifecycle.busy} onClick={() => void restore(rule.id)}>Restore</button>
            {saved !== undefined && <span role="status">{saved}</span>}
          </div>
          <ProblemMessage error={lifecycle.error} id="rule-lifecycle-problem" />
        </div>
      )}
      <form class="rule-form" onSubmit={(event) => { event.preventDefault(); void save(); }} noValidate>
        {(isNew && context === undefined) ? text('context', 'The context the rule belongs to; a new name starts a new context.') : null}
        {isNew && (
          <fieldset class="rule-kind">
            <legend>Kind of rule</legend>
            <label>
              <input type="radio" name="rule-kind" value="expression" checked={form.table === undefined} onChange={() => set('table', undefined)} />
              {' '}Expression
            </label>
            <label>
              <input type="radio" name="rule-kind" value="table" checked={form.table !== undefined}
                onChange={() => set('table', formRef.current.table ?? starterTable())} />
              {' '}Decision table
            </label>
          </fieldset>
        )}
        {text('code', isNew ? 'Unique in the context; cannot change later.' : CODE_FIXED_HINT, !isNew)}
        {text('name')}
        {area('description')}
        <Field field="severity" {...common} showCheck>
          {({ id, describedBy }) => (
            <select id={id} value={form.severity} disabled={archived} aria-describedby={describedBy} onChange={(event) => set('severity', event.currentTarget.value)}>
              {SEVERITIES.map((severity) => <option key={severity} value={severity}>{severity}</option>)}
            </select>
          )}
        </Field>
        {text('fieldPath', 'The value the rule checks ($value), e.g. applicant.income.')}
        {text('forEach', 'An array path: the rule runs once per element ($item, $index).')}
        {flag('required', 'A missing or null value fails.')}
        {code('when', 'The rule runs only when this is true.')}
        {form.table !== undefined && (
          <TableGrid table={form.table} onChange={(next) => set('table', next)} check={check} checkedRowKeys={checkedRowKeys}
            saveError={saveError} readOnly={archived} />
        )}
        {code('expression', form.table === undefined
          ? 'Must be exactly true for the payload to pass.'
          : 'Decides pass or fail for the matched row ($row.<output>); without one, a matching row passes.')}
        {area('schema', 'A JSON Schema for the value at fieldPath.', 4)}
        {area('message', 'Failure message; {{ $value }} and {{ $expected }} are filled in.')}
        {text('expectedValue', 'JSON, reported in failures.')}
        {text('errorCode')}
        <Field field="priority" {...common} showCheck>
          {({ id, describedBy }) => (
            <input id={id} type="number" step={1} value={form.priority} readOnly={archived} aria-describedby={describedBy} onInput={(event) => set('priority', event.currentTarget.value)} />
          )}
        </Field>
        {flag('enabled', 'A disabled rule is never evaluated.')}
        {text('tags', 'Comma-separated.')}
        {!archived && (
          <div class="toolbar save-bar">
            <button type="submit" disabled={saving}>Save</button>
            {rule !== undefined && !confirmingArchive && (
              <button type="button" class="secondary" onClick={() => { lifecycle.clear(); setConfirmingArchive(true); }}>Archive</button>
            )}
            {saved !== undefined && <span role="status">{saved}</span>}
          </div>
        )}
        {rule !== undefined && !archived && confirmingArchive && (
          <div class="confirm" role="group" aria-label={`Confirm archiving ${rule.code}`}>
            <p>
              Archive “{rule.code}”? It leaves evaluation at once (a new ruleset version when it is live) and its code is free
              for another rule; it stays readable and can be restored as a draft.
            </p>
            <button type="button" class="danger" disabled={lifecycle.busy} onClick={() => void archive(rule.id)}>Archive rule</button>{' '}
            <button type="button" class="secondary" onClick={() => { setConfirmingArchive(false); lifecycle.clear(); }}>Cancel</button>
          </div>
        )}
        {!archived && <ProblemMessage error={lifecycle.error} id="rule-lifecycle-problem" />}
        <ProblemMessage error={saveError} id="rule-save-problem" />
      </form>
      <TestPanel run={runTest} />
    </section>
  );
}
