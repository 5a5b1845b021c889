/**
 * The noisy tenant (A) of the isolation benchmark: its contexts, set up
 * through the API as an admin would, and its heavy operations, each at the
 * size the issue that asked for this benchmark measured:
 *
 * - `explain`: `POST /contexts/large/tests/run {"target":"live","explain":true}`
 *   on a 5,000-rule context (copies of the loan rules) with 400 stored
 *   tests of about 1.2 KB, every one passing (so that the context can be
 *   published too): a trace of every rule for every test;
 * - `quadratic`: `POST /contexts/quadratic/tests/run {"target":"live"}`
 *   on a rule whose cost is quadratic in an array (every element compared
 *   with every other), 17 tests of 11,000 items;
 * - `impact`: `POST /contexts/sampled/impact` over 60 recorded samples of
 *   11,000 items (fewer when the service does not sample payloads that
 *   large: the largest it samples), the draft being that quadratic rule;
 * - `import dry run`: `POST /contexts/imported/import?dryRun=true` of a
 *   5,000-rule file into a context that has none of them (every rule
 *   checked and compiled);
 * - `publish`: one rule of the 5,000-rule context edited (its description)
 *   and the context published, which compiles the whole ruleset and runs
 *   its 400 stored tests first;
 * - `import` (main-thread-cost.ts only, not a phase of the benchmark: it
 *   writes): the same file imported for real into a context of its own,
 *   the first call creating the 5,000 rules, the next finding them unchanged.
 */
import type { RuleDefinition } from '../../compiler/types.ts';
import { generateRuleset } from '../suites/generated-ruleset.ts';
import { loanApplicationSuite as suite } from '../suites/loan-application.ts';
import { asFileRule, callApi } from '../tools/rules-api.ts';
import { managementCall, type CallTarget, type ManagementAnswer } from './management-call.ts';

/** How big A's contexts and operations are. */
export interface NoisySizes {
  largeRules: number;
  storedTests: number;
  /** Bytes of each stored test's payload (the loan payload, padded). */
  testPayloadBytes: number;
  quadraticItems: number;
  quadraticTests: number;
  impactSamples: number;
}

/** The sizes of the measurements: the largest the service accepted with the benchmark's body limit. */
export const FULL_SIZES: NoisySizes = {
  largeRules: 5000, storedTests: 400, testPayloadBytes: 1200, quadraticItems: 11_000, quadraticTests: 17, impactSamples: 60,
};

export type OperationName = 'explain' | 'quadratic' | 'impact' | 'import dry run' | 'publish' | 'import';
/** The benchmark's phases: every operation but the real import. */
export const OPERATIONS: readonly OperationName[] = ['explain', 'quadratic', 'impact', 'import dry run', 'publish'];
/** What each operation is, in the words of the results. */
export const OPERATION_LABELS: Record<OperationName, string> = {
  explain: 'a stored-test run with explain',
  quadratic: 'a stored-test run of a quadratic rule',
  impact: 'an impact report of a quadratic draft',
  'import dry run': 'import dry runs',
  publish: 'a publish',
  import: 'imports',
};

/** The contexts, by what they are for. */
const LARGE = 'large';
const QUADRATIC = 'quadratic';
const SAMPLED = 'sampled';
const IMPORTED = 'imported';
const IMPORTED_FOR_REAL = 'imported-for-real';

/** Every element compared with every other: quadratic in the array's length, well within the rule language. */
const QUADRATIC_EXPRESSION = 'items.every(a => items.filter(b => b == a).length == 1)';
/** The large context is imported this many rules at a time (drafts), then published once. */
const IMPORT_CHUNK = 1000;
/** The smallest payload tried for the samples: any service samples that much. */
const MIN_SAMPLED_ITEMS = 500;
/** How long the background sampler gets to write a round of samples. */
const SAMPLES_WRITTEN_MS = 15_000;

/** What A's operations need between calls. */
export interface NoisyTenant {
  readonly target: CallTarget;
  readonly sizes: NoisySizes;
  /** The 5,000-rule file of the import dry runs, as JSON (stringified once). */
  readonly importFile: string;
  /** The rule whose description each publish edits, at its current version. */
  editedRule: { id: string; version: number };
  /** Items per recorded sample: `sizes.quadraticItems`, or less when the service samples no payload that large. */
  readonly sampledItems: number;
  publishes: number;
}

const path = (context: string, rest: string): string => `/api/v1/contexts/${context}/${rest}`;

function items(count: number, offset: number): number[] {
  return Array.from({ length: count }, (_, i) => offset + i);
}

/** The loan payload, passing or failing, varied by `i` and padded to about `bytes` of JSON. */
function testPayload(i: number, bytes: number): Record<string, unknown> {
  const base = (i % 10 === 9 ? suite.payloads.failing : suite.payloads.passing) as Record<string, any>;
  const payload = { ...base, loan: { ...base.loan, amount: 5000 + i * 10 }, note: '' };
  payload.note = 'x'.repeat(Math.max(0, bytes - JSON.stringify(payload).length));
  return payload;
}

/**
 * Stored tests that pass: they are first stored with a guessed answer, run
 * once, and stored again expecting what the run answered (what an author
 * pinning down today's behaviour does).
 */
async function storePassingTests(target: CallTarget, context: string, payloads: Record<string, unknown>[]): Promise<void> {
  const named = payloads.map((payload, i) => ({ name: `case ${i}`, payload }));
  await callApi(target, 'PUT', path(context, 'tests'), { tests: named.map((t) => ({ ...t, expect: { isValid: true } })) });
  const run = await callApi(target, 'POST', path(context, 'tests/run'), { target: 'live' }) as {
    results: { name: string; isValid: boolean; failures: string[] }[];
  };
  const byName = new Map(run.results.map((r) => [r.name, r]));
  await callApi(target, 'PUT', path(context, 'tests'), {
    tests: named.map((t) => {
      const got = byName.get(t.name)!;
      return { ...t, expect: got.isValid ? { isValid: true } : { isValid: false, failures: [...new Set(got.failures)] } };
    }),
  });
}

const quadraticRule: RuleDefinition = {
  code: 'DISTINCT_ITEMS', name: 'Items are distinct', expression: QUADRATIC_EXPRESSION, message: 'An item appears twice',
};
const cheapRule: RuleDefinition = { code: 'DISTINCT_ITEMS', name: 'Items are distinct', expression: 'items.length > 0', message: 'No items' };

/**
 * Creates A's contexts through the API. `validate` sends one validation of
 * A's (for the samples), with A's own validator key.
 */
export async function setUpNoisyTenant(
  target: CallTarget, sizes: NoisySizes, validate: (body: string) => Promise<void>, log: (line: string) => void,
  operations: readonly OperationName[] = OPERATIONS,
): Promise<NoisyTenant> {
  const importFile = JSON.stringify({ format: 'rules/v1', rules: generateRuleset(sizes.largeRules).map(asFileRule) });
  let editedRule = { id: '', version: 0 };
  if (operations.includes('explain') || operations.includes('publish')) {
    // In parts, each well within any budget a single call may get; the publish compiles the whole ruleset once.
    const rules = generateRuleset(sizes.largeRules).map(asFileRule);
    for (let from = 0; from < rules.length; from += IMPORT_CHUNK) {
      await callApi(target, 'POST', path(LARGE, 'import'), { format: 'rules/v1', rules: rules.slice(from, from + IMPORT_CHUNK) });
    }
    await callApi(target, 'POST', path(LARGE, 'publish'));
    const payloads = Array.from({ length: sizes.storedTests }, (_, i) => testPayload(i, sizes.testPayloadBytes));
    await storePassingTests(target, LARGE, payloads);
    const first = await callApi(target, 'GET', `/api/v1/rules?context=${LARGE}&limit=1`) as { items: { id: string; version: number }[] };
    editedRule = { id: first.items[0].id, version: first.items[0].version };
    log(`tenant A: context "${LARGE}", ${sizes.largeRules} rules, ${sizes.storedTests} stored tests`);
  }
  if (operations.includes('quadratic')) {
    await callApi(target, 'POST', `${path(QUADRATIC, 'import')}?publish=true`, { format: 'rules/v1', rules: [asFileRule(quadraticRule)] });
    await callApi(target, 'PUT', path(QUADRATIC, 'tests'), {
      tests: Array.from({ length: sizes.quadraticTests }, (_, i) => ({
        name: `distinct ${i}`, payload: { items: items(sizes.quadraticItems, i) }, expect: { isValid: true },
      })),
    });
    log(`tenant A: context "${QUADRATIC}", ${sizes.quadraticTests} tests of ${sizes.quadraticItems} items`);
  }
  const sampledItems = operations.includes('impact') ? await recordSamples(target, sizes, validate, log) : 0;
  return { target, sizes, importFile, editedRule, publishes: 0, sampledItems };
}

/**
 * The sampled context: a cheap rule live, the quadratic one as its draft,
 * and samples recorded from A's validations. A service may leave payloads
 * above a size unsampled: then the items per payload are halved until
 * every payload of a round is sampled. Returns the items per sample.
 */
async function recordSamples(
  target: CallTarget, sizes: NoisySizes, validate: (body: string) => Promise<void>, log: (line: string) => void,
): Promise<number> {
  await callApi(target, 'POST', `${path(SAMPLED, 'import')}?publish=true`, { format: 'rules/v1', rules: [asFileRule(cheapRule)] });
  await callApi(target, 'POST', path(SAMPLED, 'import'), { format: 'rules/v1', rules: [asFileRule(quadraticRule)] });
  await callApi(target, 'PUT', '/api/v1/tenant/sampling', { rate: 1 });
  let itemCount = sizes.quadraticItems;
  let recorded = await samplesRecorded(target);
  for (;;) {
    const goal = recorded + sizes.impactSamples;
    for (let i = 0; i < sizes.impactSamples; i++) {
      await validate(JSON.stringify({ context: SAMPLED, payload: { items: items(itemCount, i) } }));
    }
    // The sampler writes in the background, about once a second.
    const deadline = Date.now() + SAMPLES_WRITTEN_MS;
    while (recorded < goal && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      recorded = await samplesRecorded(target);
    }
    if (recorded >= goal) break;
    const missing = goal - recorded;
    if (itemCount / 2 < MIN_SAMPLED_ITEMS) throw new Error(`${missing} of ${sizes.impactSamples} payloads of ${itemCount} items were not sampled`);
    log(`tenant A: ${missing} of ${sizes.impactSamples} payloads of ${itemCount} items were not sampled; trying ${Math.floor(itemCount / 2)} items`);
    itemCount = Math.floor(itemCount / 2);
  }
  await callApi(target, 'PUT', '/api/v1/tenant/sampling', { rate: 0 });
  log(`tenant A: context "${SAMPLED}", ${sizes.impactSamples} samples of ${itemCount} items, a quadratic draft`);
  return itemCount;
}

/** The sampled context's samples: an impact report against its live version (1, the cheap rule) counts them. */
async function samplesRecorded(target: CallTarget): Promise<number> {
  return (await callApi(target, 'POST', path(SAMPLED, 'impact'), { target: 1 }) as { samples: number }).samples;
}

const testRunSummary = (json: any): string =>
  `${json.passed} passed, ${json.failed} failed${json.truncated === true ? ', truncated' : ''}`;

/**
 * Runs one of A's operations once; `publish` is two calls (the edit, then the publish).
 *
 * @example
 * const answers = await runOperation(tenantA, 'quadratic', 60_000);
 */
export async function runOperation(tenant: NoisyTenant, operation: OperationName, timeoutMs: number): Promise<ManagementAnswer[]> {
  const call = (method: string, url: string, body: unknown, summary?: (json: any) => string, name: string = operation) =>
    managementCall(tenant.target, {
      operation: name, method, path: url, body: typeof body === 'string' ? body : JSON.stringify(body), timeoutMs, summary,
    });
  switch (operation) {
    case 'explain':
      return [await call('POST', path(LARGE, 'tests/run'), { target: 'live', explain: true }, testRunSummary)];
    case 'quadratic':
      return [await call('POST', path(QUADRATIC, 'tests/run'), { target: 'live' }, testRunSummary)];
    case 'impact':
      return [await call('POST', path(SAMPLED, 'impact'), {}, (json) => `${json.samples} samples, ${json.becameInvalid} became invalid`)];
    case 'import dry run':
      return [await call('POST', `${path(IMPORTED, 'import')}?dryRun=true`, tenant.importFile, (json) => `${json.create?.length} to create`)];
    case 'import':
      return [await call('POST', path(IMPORTED_FOR_REAL, 'import'), tenant.importFile, (json) => `${json.create?.length} created, ${json.unchanged?.length} unchanged`)];
    case 'publish':
      return publish(tenant, timeoutMs);
  }
}

async function publish(tenant: NoisyTenant, timeoutMs: number): Promise<ManagementAnswer[]> {
  const rule = tenant.editedRule;
  tenant.publishes++;
  const edit = await managementCall(tenant.target, {
    operation: 'publish (rule edit)', method: 'PATCH', path: `/api/v1/rules/${rule.id}`, contentType: 'application/merge-patch+json',
    body: JSON.stringify({ version: rule.version, description: `edited for publish ${tenant.publishes}` }), timeoutMs,
    summary: (json) => {
      rule.version = json.version;
      return `version ${json.version}`;
    },
  });
  if (edit.status !== 200) {
    // Whatever went wrong, read the rule's current version for the next attempt.
    const current = await callApi(tenant.target, 'GET', `/api/v1/rules/${rule.id}`).catch(() => undefined) as { version: number } | undefined;
    if (current !== undefined) rule.version = current.version;
    return [edit];
  }
  const published = await managementCall(tenant.target, {
    operation: 'publish', method: 'POST', path: path(LARGE, 'publish'), timeoutMs,
    summary: (json) => `ruleset version ${json.rulesetVersion}`,
  });
  return [edit, published];
}
