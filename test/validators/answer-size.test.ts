/**
 * The answer-size estimate against the answers the service really writes:
 * the response schemas' own serializers over the same failure records.
 */
import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import type { FailureRecord } from '../../compiler/types.ts';
import { batchResultResponseSchema, singleResultResponseSchema } from '../../src/routes/schemas/result-schemas.ts';
import { SHARED_SCHEMAS_BY_ID } from '../../src/routes/schemas/shared-schemas.ts';
import { AnswerBudget } from '../../src/validators/answer-size.ts';

// The schemas refer to the failure records' shared schemas, as the routes' serializers resolve them.
const sharedSchemas = { schema: SHARED_SCHEMAS_BY_ID as unknown as Record<string, Schema> };
const serializeSingle = fastJsonStringify(singleResultResponseSchema as unknown as Schema, sharedSchemas);
const serializeBatch = fastJsonStringify(batchResultResponseSchema as unknown as Schema, sharedSchemas);

const shared = { nested: [1, 2.5, -3e-7, true, null, 'text'], deeper: { a: { b: [{}, []] } } };

function failures(count: number): FailureRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    ruleCode: `R${i}`,
    ruleName: `rule number ${i}`,
    severity: i % 2 === 0 ? 'Error' : 'Warning',
    message: `value ${i} is wrong`.repeat(1 + (i % 5)),
    errorCode: `E_${i}`,
    fieldPath: `items[${i}].x`,
    actualValue: i % 3 === 0 ? shared : i % 3 === 1 ? i * 1.25 : `s${i}`,
    expectedValue: i % 4 === 0 ? null : { min: i, list: ['a', 'b'] },
  }));
}

describe('AnswerBudget', () => {
  it('estimates a single answer to within its envelope', () => {
    for (const count of [1, 7, 300]) {
      const records = failures(count);
      const budget = new AnswerBudget(Number.MAX_SAFE_INTEGER, 'full');
      expect(budget.add(records)).toBe(true);
      const written = serializeSingle({ isValid: false, totalRulesEvaluated: count, failures: records, executionTimeMs: 0 }).length;
      // The envelope (`{"isValid":false,...,"executionTimeMs":0}`) is not counted; one comma too many is.
      const envelope = serializeSingle({ isValid: false, totalRulesEvaluated: count, failures: [], executionTimeMs: 0 }).length;
      expect(budget.bytes).toBe(written - envelope + 1);
    }
  });

  it('estimates a batch answer, items and short records, exactly but for the envelope', () => {
    const records = failures(50);
    const results = Array.from({ length: 10 }, (_, i) => ({ id: `item-${i}`, isValid: false, failures: records.slice(i * 5, i * 5 + 5) }));
    const budget = new AnswerBudget(Number.MAX_SAFE_INTEGER, 'short');
    const itemOverhead = JSON.stringify({ id: '', isValid: false, failures: [] }).length + 1;
    for (const result of results) budget.add(result.failures, result.id.length + itemOverhead);
    const written = serializeBatch({ results, totalProcessed: 10, totalFailed: 10, executionTimeMs: 0 }).length;
    const envelope = serializeBatch({ results: [], totalProcessed: 10, totalFailed: 10, executionTimeMs: 0 }).length;
    // One comma too many per item's last failure and after the last item.
    expect(budget.bytes).toBe(written - envelope + 10 + 1);
  });

  it('says no once the total passes the bound, and stops measuring there', () => {
    const records = failures(100);
    const one = new AnswerBudget(Number.MAX_SAFE_INTEGER, 'full');
    one.add(records.slice(0, 1));
    const budget = new AnswerBudget(one.bytes * 10, 'full');
    expect(budget.add(records.slice(0, 5))).toBe(true);
    expect(budget.add(records.slice(5))).toBe(false);
    expect(budget.bytes).toBeLessThan(one.bytes * 40);
  });

  it('walks a value shared by many failures once', () => {
    const list = Array.from({ length: 1000 }, (_, i) => i);
    let reads = 0;
    // A getter counts the walks (payload values are plain data; this one only reports being read).
    const big = Object.defineProperty({}, 'list', { enumerable: true, get: () => ((reads += 1), list) });
    const records = Array.from({ length: 10_000 }, () => ({ ...failures(1)[0], actualValue: big }));
    const budget = new AnswerBudget(Number.MAX_SAFE_INTEGER, 'full');
    budget.add(records);
    expect(reads).toBe(1);
    expect(budget.bytes).toBeGreaterThan(10_000 * JSON.stringify(big).length);
  });
});
