/**
 * The order form's script: checks the order as the user types with the
 * rules service's local validator (the context's published rules, run in
 * this page, verified against the service's signing key), shows each
 * failure's message next to the input its `fieldPath` names, and switches
 * to a newly published ruleset version as soon as the change feed tells
 * (`onUpdate`), without a reload. No validation request reaches the service.
 *
 * Where the service is, and with which tenant, context, key and public key,
 * comes from `/config.json`, which the example's server (../server.ts) writes
 * from its command line.
 */
import { createRulesClient, type LocalValidator, type ValidationResult } from '../../../clients/typescript/src/index.ts';
import type { FormConfig } from './config.ts';


type Failure = ValidationResult['failures'][number];

const form = document.querySelector<HTMLFormElement>('#order')!;
const rulesetStatus = document.querySelector<HTMLElement>('#ruleset')!;
const outcome = document.querySelector<HTMLElement>('#outcome')!;
const formMessages = document.querySelector<HTMLUListElement>('#form-messages')!;
/** The form's inputs, by the payload path each one fills (its `name`, as in a failure's fieldPath). */
const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>(
  [...form.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input[name], select[name]')].map((input) => [input.name, input]),
);
/** Inputs the user has changed: only their messages show while typing, all of them after "Check order". */
const touched = new Set<string>();
let showAll = false;

/** The order as the rules see it: numbers as numbers, empty inputs left out. */
function readOrder(): Record<string, unknown> {
  const value = (name: string): string => inputs.get(name)?.value.trim() ?? '';
  const number = (name: string): number | undefined => (value(name) === '' ? undefined : Number(value(name)));
  const text = (name: string): string | undefined => (value(name) === '' ? undefined : value(name));
  const items = [0, 1, 2]
    .map((index) => ({ sku: text(`items[${index}].sku`), qty: number(`items[${index}].qty`) }))
    .filter((item) => item.sku !== undefined || item.qty !== undefined);
  return { customer: { email: text('customer.email') }, country: text('country'), quantity: number('quantity'), amount: number('amount'), items };
}

/** Replaces a list's entries with one per message (textContent only: messages are data, never markup). */
function showMessages(list: HTMLUListElement, messages: readonly string[]): void {
  list.replaceChildren(...messages.map((message) => {
    const item = document.createElement('li');
    item.textContent = message;
    return item;
  }));
}

/** Shows failures next to their inputs; those naming no input of the form (or an untouched one, after a submit) go under the form. */
function render(failures: readonly Failure[]): void {
  const byInput = new Map<string, string[]>();
  const elsewhere: string[] = [];
  for (const failure of failures) {
    const path = failure.fieldPath ?? '';
    if (inputs.has(path)) byInput.set(path, [...(byInput.get(path) ?? []), failure.message]);
    else elsewhere.push(failure.message);
  }
  for (const [path, input] of inputs) {
    const messages = showAll || touched.has(path) ? byInput.get(path) ?? [] : [];
    const list = document.getElementById(input.getAttribute('aria-describedby') ?? '');
    if (list instanceof HTMLUListElement) showMessages(list, messages);
    if (messages.length > 0) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
  showMessages(formMessages, showAll ? elsewhere : []);
}

function check(validator: LocalValidator): ValidationResult | undefined {
  if (!validator.loaded) return undefined;
  const answer = validator.validateSync(readOrder());
  render(answer.failures);
  return answer;
}

async function start(): Promise<void> {
  const response = await fetch('/config.json');
  if (!response.ok) throw new Error(`/config.json answered ${response.status}`);
  const config = await response.json() as FormConfig;
  const client = createRulesClient({ baseUrl: config.serviceUrl, tenantId: config.tenantId, apiKey: config.clientKey });
  const validator = client.localValidator(config.context, {
    publicKey: config.publicKey,
    onError: (error) => { rulesetStatus.textContent = `Rules could not be updated: ${error.message}`; },
  });
  form.addEventListener('input', (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) touched.add(event.target.name);
    outcome.textContent = '';
    check(validator);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    showAll = true;
    const answer = check(validator);
    if (answer === undefined) outcome.textContent = 'The rules are not loaded yet.';
    else outcome.textContent = answer.isValid ? 'The order passes every rule.' : `The order fails ${answer.failures.length} rule check(s).`;
  });
  validator.onUpdate(({ version }) => {
    rulesetStatus.textContent = `Checked in this page with rules version ${version} of “${config.context}” (updated ${new Date().toLocaleTimeString()}).`;
    check(validator);
  });
  await validator.ready;
  rulesetStatus.textContent = `Checked in this page with rules version ${validator.version} of “${config.context}”.`;
  check(validator);
}

start().catch((error: unknown) => {
  rulesetStatus.textContent = `The rules could not be loaded: ${error instanceof Error ? error.message : String(error)}`;
});
