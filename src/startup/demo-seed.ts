/**
 * The first-run demo (docs/api.md): on an empty database with no
 * configured tenants, a `demo` tenant with published sample rules in the
 * `loan-application` context and a fresh admin key, so that the printed
 * curl command shows a real result.
 */
import type { KeyService, ValidatorService } from '../app-deps.ts';
import type { RuleContent, Storage } from '../storage/types.ts';

export const DEMO_TENANT = 'demo';
export const DEMO_CONTEXT = 'loan-application';

/** Fills a rule's defaults, so the sample list reads as what differs. */
function rule(code: string, content: Partial<RuleContent> & Pick<RuleContent, 'name'>): { code: string; content: RuleContent } {
  return {
    code,
    content: { severity: 'Error', required: false, priority: 0, enabled: true, tags: ['demo'], ...content },
  };
}

/** The sample rules: a required field, a limit, a cross-field check, a forEach, a format check and a decision table. */
export const DEMO_RULES = [
  rule('AMOUNT_REQUIRED', {
    name: 'Loan amount is required',
    fieldPath: 'amount',
    required: true,
    message: 'The loan amount is required',
    priority: 1,
  }),
  rule('AMOUNT_LIMIT', {
    name: 'Loan amount limit',
    fieldPath: 'amount',
    expression: 'amount <= 50000',
    message: 'Amount {{ $value }} exceeds the limit of {{ $expected }}',
    priority: 2,
  }),
  rule('INCOME_CHECK', {
    name: 'Income supports the amount',
    fieldPath: 'applicant.income',
    expression: 'applicant.income * 5 >= amount',
    when: 'isNumber(amount)',
    message: 'Amount {{ amount }} is more than five times the income of {{ $value }}',
    priority: 3,
  }),
  rule('ITEM_QUANTITY', {
    name: 'Item quantities are positive',
    forEach: 'items',
    fieldPath: 'items[].qty',
    expression: '$item.qty > 0',
    message: 'Item {{ $index }} has quantity {{ $value }}; it must be positive',
    priority: 4,
  }),
  rule('APPLICANT_EMAIL', {
    name: 'Applicant email is valid',
    fieldPath: 'applicant.email',
    expression: 'isEmail($value)',
    severity: 'Warning',
    message: '"{{ $value }}" is not a valid email address',
    priority: 5,
  }),
  // A payload without a product or a country takes the last row, the general limit, so the sample payload passes it.
  rule('PRODUCT_COUNTRY_LIMIT', {
    name: 'Amount within the limit of the product and country',
    fieldPath: 'amount',
    when: 'isNumber(amount)',
    table: {
      hitPolicy: 'first',
      inputs: [{ name: 'product', path: 'product' }, { name: 'country', path: 'applicant.country' }],
      outputs: ['maxAmount'],
      rows: [
        { when: ['"auto"', 'in ["US", "CA"]'], then: [50000] },
        { when: ['"auto"', '-'], then: [30000] },
        { when: ['"personal"', 'in ["US", "CA"]'], then: [25000] },
        { when: ['"personal"', '-'], then: [15000] },
        { when: ['-', '-'], then: [50000] },
      ],
    },
    expression: '$value <= $row.maxAmount',
    message: 'Amount {{ $value }} is over the limit of {{ $row.maxAmount }} for this product and country',
    priority: 6,
  }),
];

/** A payload for the printed command: it breaks INCOME_CHECK, so the answer shows a failure. */
export const DEMO_PAYLOAD = {
  amount: 25000,
  applicant: { name: 'Jane Doe', income: 4000, email: 'jane@example.com' },
  items: [{ sku: 'A-1', qty: 1 }, { sku: 'B-2', qty: 2 }],
};

export interface DemoSeedDeps {
  storage: Storage;
  validators: ValidatorService;
  keys: KeyService;
  maxRulesPerContext: number;
}

/**
 * Seeds the demo when the database is empty. Returns the new admin key, or
 * undefined when the database already held a tenant.
 */
export async function seedDemo(deps: DemoSeedDeps): Promise<string | undefined> {
  const { storage, validators, keys } = deps;
  if (!(await storage.tenants.isEmpty())) return undefined;
  await storage.tenants.ensureTenant(DEMO_TENANT);
  // A deployment may allow fewer rules per context than the demo has: it gets the first ones.
  for (const { code, content } of DEMO_RULES.slice(0, deps.maxRulesPerContext)) {
    await storage.rules.create(DEMO_TENANT, DEMO_CONTEXT, code, content, deps.maxRulesPerContext);
  }
  const { live } = await storage.rules.publishContext(DEMO_TENANT, DEMO_CONTEXT, (next) => validators.compile(next));
  if (live !== undefined) validators.install(live);
  const { key } = await keys.create(DEMO_TENANT, 'demo admin', 'admin');
  return key;
}
