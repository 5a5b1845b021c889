/**
 * The loan-application rules in json-rules-engine's condition language,
 * run asynchronously as that engine always runs. The payload's top-level
 * keys are its facts and conditions read into them with JSONPath.
 *
 * What the condition language lacks comes through its documented
 * extension points: operators `present`, `matches` and `isInteger`, and
 * computed facts for arithmetic and dates (`incomeLimit`, `itemsTotal`,
 * `applicantAge`, `daysToStart`). forEach rules live in a second engine run
 * once per element with the facts `item` and `index`, since a condition
 * cannot report which element failed.
 */
import { Engine, type Almanac, type NestedCondition, type RuleProperties, type TopLevelCondition } from 'json-rules-engine';
import { ageAt, daysBetween } from './date-helpers.ts';
import type { PeerEngine } from './peer-engine.ts';

type Condition = NestedCondition;

const is = (fact: string, path: string, operator: string, value: unknown): Condition =>
  ({ fact, path, operator, value });
const present = (fact: string, path: string, yes = true): Condition => is(fact, path, 'present', yes);
const factRef = (fact: string, path: string): { fact: string; path: string } => ({ fact, path });

interface Source {
  code: string;
  when?: Condition;
  field?: [fact: string, path: string];
  required?: boolean;
  test?: Condition[];
}

/** Skip when `when` is false or an optional field is missing, as the rule language does. */
function toRule(source: Source): RuleProperties {
  const [fact, path] = source.field ?? ['', ''];
  const body: Condition[] = [...(source.field && source.required ? [present(fact, path)] : []), ...(source.test ?? [])];
  let conditions: TopLevelCondition = { all: body };
  if (source.field && !source.required) conditions = { any: [present(fact, path, false), { all: body }] };
  if (source.when) conditions = { any: [{ not: source.when }, conditions] };
  return { name: source.code, conditions, event: { type: source.code } };
}

const addressSchema: Condition[] = [
  ...['line1', 'city', 'postcode', 'country'].map((key) => present('applicant', `$.address.${key}`)),
  is('applicant', '$.address.line1.length', 'greaterThanInclusive', 1),
  is('applicant', '$.address.line1.length', 'lessThanInclusive', 100),
  is('applicant', '$.address.city.length', 'greaterThanInclusive', 1),
  is('applicant', '$.address.city.length', 'lessThanInclusive', 60),
  is('applicant', '$.address.postcode', 'matches', '^[A-Z0-9 ]{3,10}$'),
  is('applicant', '$.address.country', 'in', ['GB', 'IE', 'FR', 'DE', 'NL']),
];

const payloadRules: Source[] = [
  { code: 'APPLICANT_ADDRESS', field: ['applicant', '$.address'], required: true, test: addressSchema },
  { code: 'APPLICANT_LAST_NAME', field: ['applicant', '$.lastName'], required: true },
  {
    code: 'APPLICATION_ID', field: ['applicationId', '$'], required: true,
    test: [is('applicationId', '$', 'matches', '^APP-[0-9]{4}-[0-9]{6}$')],
  },
  {
    code: 'CONSENT_CREDIT_CHECK', field: ['consents', '$.creditCheck'], required: true,
    test: [is('consents', '$.creditCheck', 'equal', true)],
  },
  {
    code: 'APPLICANT_AGE', field: ['applicant', '$.dob'], required: true,
    test: [is('applicantAge', '$', 'greaterThanInclusive', 18)],
  },
  {
    code: 'APPLICANT_NAME_LENGTH', field: ['applicant', '$.firstName'],
    test: [is('applicant', '$.firstName', 'matches', '\\S'), is('applicant', '$.firstName.length', 'lessThanInclusive', 50)],
  },
  {
    code: 'APPLICANT_PHONE', field: ['applicant', '$.phone'],
    test: [is('applicant', '$.phone', 'matches', '^[+][0-9][0-9 ]{7,19}$')],
  },
  {
    code: 'EMPLOYMENT_YEARS', when: is('applicant', '$.employment.status', 'equal', 'employed'),
    field: ['applicant', '$.employment.years'], required: true,
    test: [is('applicant', '$.employment.years', 'greaterThanInclusive', 1)],
  },
  {
    code: 'COLLATERAL_COVERAGE', when: is('loan', '$.amount', 'greaterThan', 25000),
    field: ['collateral', '$.value'], required: true,
    test: [is('collateral', '$.value', 'greaterThanInclusive', factRef('loan', '$.amount'))],
  },
  {
    code: 'LOAN_AMOUNT_RANGE', field: ['loan', '$.amount'], required: true,
    test: [is('loan', '$.amount', 'greaterThanInclusive', 1000), is('loan', '$.amount', 'lessThanInclusive', 1000000)],
  },
  { code: 'LOAN_CURRENCY', field: ['loan', '$.currency'], test: [is('loan', '$.currency', 'matches', '^[A-Z]{3}$')] },
  {
    code: 'LOAN_PURPOSE', field: ['loan', '$.purpose'],
    test: [is('loan', '$.purpose', 'in', ['equipment', 'vehicle', 'working-capital'])],
  },
  {
    code: 'LOAN_START_WINDOW', when: present('submittedAt', '$'), field: ['loan', '$.startDate'],
    test: [is('daysToStart', '$', 'greaterThanInclusive', 0), is('daysToStart', '$', 'lessThanInclusive', 90)],
  },
  {
    code: 'LOAN_TERM', field: ['loan', '$.termMonths'], required: true,
    test: [is('loan', '$.termMonths', 'in', [12, 24, 36, 48, 60, 84, 120])],
  },
  {
    code: 'LOAN_TO_INCOME', field: ['loan', '$.amount'],
    test: [is('loan', '$.amount', 'lessThanInclusive', factRef('incomeLimit', '$'))],
  },
  {
    code: 'ITEMS_PRESENT', field: ['items', '$'], required: true,
    test: [is('items', '$.length', 'greaterThanInclusive', 1), is('items', '$.length', 'lessThanInclusive', 50)],
  },
  {
    code: 'ITEMS_TOTAL', field: ['loan', '$.amount'],
    test: [is('itemsTotal', '$', 'greaterThanInclusive', factRef('loan', '$.amount'))],
  },
];

const lineRules: Source[] = [
  {
    code: 'LINE_QTY', field: ['item', '$.qty'], required: true,
    test: [
      is('item', '$.qty', 'isInteger', true),
      is('item', '$.qty', 'greaterThanInclusive', 1),
      is('item', '$.qty', 'lessThanInclusive', 100),
    ],
  },
  {
    code: 'LINE_SKU', when: is('item', '$.kind', 'equal', 'equipment'), field: ['item', '$.sku'], required: true,
    test: [is('item', '$.sku', 'matches', '^[A-Z]{3}-[0-9]{4}$')],
  },
  { code: 'LINE_UNIT_PRICE', field: ['item', '$.unitPrice'], test: [is('item', '$.unitPrice', 'greaterThan', 0)] },
];

const order = new Map([...payloadRules, ...lineRules].map((rule, index) => [rule.code, index]));
const rank = (key: string): number => order.get(key.replace(/\[\d+\]$/, '')) ?? 0;
const elementIndex = (key: string): number => Number(/\[(\d+)\]$/.exec(key)?.[1] ?? -1);

function newEngine(sources: Source[]): Engine {
  const engine = new Engine(sources.map(toRule), { allowUndefinedFacts: true });
  const patterns = new Map<string, RegExp>();
  engine.addOperator<unknown, boolean>('present', (value, expected) => (value !== undefined && value !== null) === expected);
  engine.addOperator<unknown, boolean>('isInteger', (value, expected) => Number.isInteger(value) === expected);
  engine.addOperator<unknown, string>('matches', (value, pattern) => {
    let regex = patterns.get(pattern);
    if (regex === undefined) patterns.set(pattern, (regex = new RegExp(pattern)));
    return typeof value === 'string' && regex.test(value);
  });
  return engine;
}

const read = (almanac: Almanac, fact: string, path = '$'): Promise<unknown> => almanac.factValue(fact, {}, path);

/**
 * The json-rules-engine peer for the loan-application suite.
 *
 * @example
 * const failed = await createJsonRulesEngineLoanEngine(now).run(payload);
 */
export function createJsonRulesEngineLoanEngine(now: number): PeerEngine {
  const payloadEngine = newEngine(payloadRules);
  payloadEngine.addFact('incomeLimit', async (_params, almanac) => {
    const income = await read(almanac, 'applicant', '$.income');
    return typeof income === 'number' ? income * 5 : Number.NaN;
  });
  payloadEngine.addFact('applicantAge', async (_params, almanac) =>
    ageAt(await read(almanac, 'applicant', '$.dob'), now) ?? Number.NaN);
  payloadEngine.addFact('daysToStart', async (_params, almanac) =>
    daysBetween(await read(almanac, 'submittedAt'), await read(almanac, 'loan', '$.startDate')) ?? Number.NaN);
  payloadEngine.addFact('itemsTotal', async (_params, almanac) => {
    const items = await read(almanac, 'items');
    if (!Array.isArray(items)) return Number.NaN;
    return items.reduce<number>((total, item) => total + Number(item?.qty) * Number(item?.unitPrice), 0);
  });
  const lineEngine = newEngine(lineRules);

  const run = async (payload: unknown): Promise<string[]> => {
    const facts = payload as Record<string, unknown>;
    const failed = (await payloadEngine.run(facts)).failureResults.map((r) => r.name);
    if (Array.isArray(facts.items)) {
      for (let index = 0; index < facts.items.length; index++) {
        const result = await lineEngine.run({ item: facts.items[index], index });
        for (const r of result.failureResults) failed.push(`${r.name}[${index}]`);
      }
    }
    return failed.sort((a, b) => rank(a) - rank(b) || elementIndex(a) - elementIndex(b));
  };
  return {
    name: 'json-rules-engine',
    async: true,
    omitted: [],
    notes: [
      'Operators present, matches, isInteger and computed facts (income limit, items total, age, days) are JavaScript extensions.',
      'ITEMS_PRESENT leaves out distinct SKUs; LOAN_CURRENCY is a regex; the address schema has no JSON type checks.',
      'forEach rules run in a second engine once per element (one engine.run per line item).',
    ],
    run,
  };
}
