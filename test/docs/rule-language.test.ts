/**
 * docs/rule-language.md kept true where a machine can tell:
 * - every rule it shows is saved by POST /api/v1/rules on a real service;
 * - every rule it shows as refused gets exactly the errors it shows;
 * - every evaluated example (rules, payload, answer) is published in a
 *   context of its own and validated, and answers exactly what it shows;
 * - every expression shown with its value evaluates to that value (with the
 *   compiler's single-expression entry: same checker, code and runtime);
 * - every function, method and `$`-name of the compiler's catalogue, and
 *   the function and method tables are exactly the language's records, and
 *   every limit in its limits table, is there, with the value the code has.
 * How the document marks its examples: doc-examples.ts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileExpressionFunction, DEFAULT_LIMITS, MAX_CONTEXT_PATTERN_WEIGHT, MAX_FAILURES_PER_VALIDATION, MAX_PATTERN_SIZE, MAX_RULESET_TEXT_LENGTH, MAX_SCHEMA_APPLICATIONS } from '../../compiler/index.ts';
import { CALLBACK_METHODS, DOLLAR_NAMES, FUNCTIONS, VALUE_METHODS } from '../../compiler/expression/catalog.ts';
import { CALLBACK_METHOD_RECORDS, FUNCTION_RECORDS, VALUE_METHOD_RECORDS } from '../../compiler/language/index.ts';
import { MAX_FIELD_PATTERN_WEIGHT } from '../../compiler/regex/pattern-size.ts';
import { MAX_JOIN_LENGTH, MAX_MESSAGE_LENGTH } from '../../compiler/runtime.ts';
import { MAX_SCHEMA_FAILURES, MAX_UNIQUE_ITEMS } from '../../compiler/schema/index.ts';
import { loadConfig } from '../../src/config.ts';
import { createRuleBodySchema, MAX_TAG_LENGTH, MAX_TAGS } from '../../src/routes/schemas/rule-schemas.ts';
import { TUNING } from '../../src/tuning.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { docExamples, type EvaluatedExample, type RefusedExample, type RuleExample, type ValueExample } from './doc-examples.ts';

const DOC_PATH = new URL('../../docs/rule-language.md', import.meta.url);
const markdown = readFileSync(DOC_PATH, 'utf8');
const examples = docExamples(markdown);

describe('what the document names', () => {
  it('has the examples this test checks (an empty extraction would pass anything)', () => {
    expect(examples.rules.length).toBeGreaterThanOrEqual(10);
    expect(examples.refused.length).toBeGreaterThanOrEqual(60);
    expect(examples.evaluated.length).toBeGreaterThanOrEqual(8);
    expect(examples.values.length).toBeGreaterThanOrEqual(80);
  });

  it('documents every function, method and $-name of the compiler', () => {
    const missing = [
      ...Object.keys(FUNCTIONS).map((name) => `\`${name}(`),
      ...Object.keys(VALUE_METHODS).map((name) => `\`.${name}(`),
      ...Object.keys(CALLBACK_METHODS).map((name) => `\`.${name}(`),
      ...Object.keys(DOLLAR_NAMES).map((name) => `\`${name}`),
    ].filter((written) => !markdown.includes(written));
    expect(missing).toEqual([]);
  });

  /** The table rows (lines starting with "| `") of the section whose heading is `heading`. */
  function tableRows(heading: string): string[] {
    const start = markdown.indexOf(`\n${heading}\n`);
    const end = markdown.indexOf('\n## ', start + 1);
    return markdown.slice(start, end).split('\n').filter((line) => line.startsWith('| `'));
  }
  const code = (text: string): string => `\`${text}\``;

  it('has as its functions table exactly the rows of the language\'s function records, in their order', () => {
    const rows = FUNCTION_RECORDS.map((f) => `| ${f.forms.map(code).join(', ')} | ${f.doc} | ${f.examples.map(code).join(', ')} |`);
    expect(tableRows('## 7. Functions')).toEqual(rows);
  });

  it('has as its methods table exactly the rows of the language\'s method records, after `.length`', () => {
    const rows = [...VALUE_METHOD_RECORDS, ...CALLBACK_METHOD_RECORDS].flatMap((m) => m.uses.map((use) => `| ${code(m.form)} | ${use.on} | ${use.doc} | ${code(use.example)} |`));
    expect(tableRows('## 6. Methods and callbacks').filter((line) => !line.startsWith('| `.length`'))).toEqual(rows);
  });

  it('lists in its operators table exactly the operators the compiler takes', () => {
    const start = markdown.indexOf('\n### Operators\n');
    const table = markdown.slice(start, markdown.indexOf('\n### ', start + 1)).split('\n').filter((line) => line.startsWith('| `'));
    const rows = table.map((line) => {
      const operators = line.split(/(?<!\\)\|/)[1];
      return { operators, tokens: [...operators.matchAll(/`([^`]+)`/g)].map((match) => match[1].replaceAll('\\|', '|')) };
    });
    const prefix = new Set(rows.filter((row) => row.operators.includes('(prefix)')).flatMap((row) => row.tokens));
    const infix = new Set(rows.filter((row) => !row.operators.includes('(prefix)') && !row.operators.includes('calls')).flatMap((row) => row.tokens));
    expect(prefix.size).toBeGreaterThan(0);
    expect(infix.size).toBeGreaterThan(10);
    // Every operator JavaScript has that an expression could use.
    const jsInfix = ['==', '!=', '===', '!==', '<', '<=', '>', '>=', '<<', '>>', '>>>', '+', '-', '*', '/', '%', '**', '|', '^', '&', 'in', 'instanceof', '&&', '||', '??'];
    const jsPrefix = ['!', '-', '+', '~', 'typeof', 'void', 'delete'];
    const wrong = [
      ...jsInfix.map((op) => ({ expression: `a ${op} b`, listed: infix.has(op) })),
      ...jsPrefix.map((op) => ({ expression: `${op} a`, listed: prefix.has(op) })),
      { expression: 'a ? b : c', listed: infix.has('? :') },
    ].filter(({ expression, listed }) => compileExpressionFunction(expression).ok !== listed)
      .map(({ expression, listed }) => `${expression}: ${listed ? 'listed but refused' : 'compiles but not listed'}`);
    expect(wrong).toEqual([]);
  });

  it('states every limit with the value the code has', () => {
    const config = loadConfig({});
    const body = createRuleBodySchema.properties;
    const limits: [row: string, value: number][] = [
      ['Length of `expression`, and of `when`', config.maxExpressionLength],
      ['Nesting depth of an expression', DEFAULT_LIMITS.maxNestingDepth],
      ['Operations chained into one another', DEFAULT_LIMITS.maxNestingDepth * 4],
      ['Levels of callbacks', DEFAULT_LIMITS.maxCallbackDepth],
      ['Length of a regex pattern', DEFAULT_LIMITS.maxPatternLength],
      ['Program of one regex pattern', MAX_PATTERN_SIZE],
      ['Weight of the patterns of one field', MAX_FIELD_PATTERN_WEIGHT],
      ['Weight of the distinct patterns of a ruleset', MAX_CONTEXT_PATTERN_WEIGHT],
      ['Length of `message`', DEFAULT_LIMITS.maxTemplateLength],
      ['Length of a rendered message, and of one placeholder', MAX_MESSAGE_LENGTH],
      ['Size of `schema`', DEFAULT_LIMITS.maxSchemaBytes],
      ['Depth of `schema`', DEFAULT_LIMITS.maxSchemaDepth],
      ['Subschemas applied to one value', MAX_SCHEMA_APPLICATIONS],
      ['`maxItems` beside `uniqueItems`', MAX_UNIQUE_ITEMS],
      ['Failures of one schema check', MAX_SCHEMA_FAILURES],
      ['Size of `expectedValue`', DEFAULT_LIMITS.maxExpectedValueBytes],
      ['Depth of `expectedValue`', TUNING.maxExpectedValueDepth.value],
      ['Length of a path', DEFAULT_LIMITS.maxPathLength],
      ['Segments of a path', DEFAULT_LIMITS.maxPathSegments],
      ['Length of `name`', body.name.maxLength],
      ['Length of `description`', body.description.maxLength],
      ['Length of `errorCode`', body.errorCode.maxLength],
      ['Number of `tags`', MAX_TAGS],
      ['Length of a tag', MAX_TAG_LENGTH],
      ['Rules per context', config.maxRulesPerContext],
      ['Text of a ruleset', MAX_RULESET_TEXT_LENGTH],
      ['Length of a string built with `+`', MAX_JOIN_LENGTH],
      ['Failures of one validation', MAX_FAILURES_PER_VALIDATION],
      ['Evaluation time of one request', TUNING.evaluationDeadlineMs.value],
    ];
    const wrong = limits.filter(([row, value]) => {
      const line = markdown.split('\n').find((l) => l.startsWith(`| ${row} |`));
      const cell = line?.split(' | ')[1];
      return cell === undefined || !cell.startsWith(value.toLocaleString('en-US'));
    }).map(([row, value]) => `${row}: ${value.toLocaleString('en-US')}`);
    expect(wrong).toEqual([]);
  });
});

describe('expressions shown with their values', () => {
  it.each(examples.values.map((example): [number, string, ValueExample] => [example.line, example.expression, example]))(
    'line %i: %s',
    (_line, expression, { value }) => {
      const compiled = compileExpressionFunction(expression);
      if (!compiled.ok) throw new Error(`does not compile: ${compiled.error.message}`);
      const actual = compiled.evaluate({ payload: {} });
      if (value === 'undefined') expect(actual).toBeUndefined();
      else if (value === 'invalid number') expect(Number.isNaN(actual)).toBe(true);
      else expect(actual).toEqual(value.json);
    },
  );
});

describe('the examples, on a real service', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const api = (method: string, path: string, body?: unknown) => t.request(method, `/api/v1${path}`, { body });

  it.each(examples.rules.map((example): [number, RuleExample] => [example.line, example]))(
    'the rule at line %i is saved',
    async (_line, { rule }) => {
      const created = await api('POST', '/rules', rule);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // Archived at once, so that later examples may reuse its code in its context.
      const archived = await api('DELETE', `/rules/${created.body.id}`);
      expect(archived.status).toBe(204);
    },
  );

  it.each(examples.refused.map((example): [number, RefusedExample] => [example.line, example]))(
    'the rule at line %i is refused with the errors shown',
    async (_line, { rule, errors }) => {
      const response = await api('POST', '/rules', rule);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      const shown = (response.body.errors as { path: string; message: string }[]).map((e) => `${e.path}: ${e.message}`);
      expect(shown).toEqual(errors);
    },
  );

  it.each(examples.evaluated.map((example): [number, EvaluatedExample] => [example.line, example]))(
    'the payload at line %i gets the answer shown',
    async (line, { rules, payload, result }) => {
      // A context of its own: the rules as written, but for their context.
      const context = `docs-example-${line}`;
      for (const rule of rules) {
        const created = await api('POST', '/rules', { ...rule, context });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
      }
      const published = await api('POST', `/contexts/${context}/publish`);
      expect(published.status, JSON.stringify(published.body)).toBe(200);
      const answer = await api('POST', '/validation/validate', { context, payload });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const { executionTimeMs, ...rest } = answer.body;
      expect(typeof executionTimeMs).toBe('number');
      expect(rest).toEqual(result);
    },
  );
});
