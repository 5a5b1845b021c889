/**
 * A client built on nothing but the types generated from the OpenAPI
 * document (src/openapi/generated/api-types.ts): a tiny typed fetch wrapper that
 * creates a rule, publishes its context and validates a payload. The
 * OpenAPI tests type-check it against freshly generated types and run it
 * against a live server, so it shows what a generated client can rely on.
 *
 * @example
 * const client = new RulesClient('http://127.0.0.1:3000', 'acme', process.env.API_KEY!);
 * const rule = await client.createRule({ context: 'loan-application', code: 'AMOUNT_LIMIT', name: 'Amount limit', expression: 'amount <= 50000' });
 * await client.publishContext(rule.context);
 * const result = await client.validate({ context: 'loan-application', payload: { amount: 60000 } });
 */
import type { components, operations } from '../../src/openapi/generated/api-types.ts';

/**
 * The JSON body of a request or response object. Indexed access, not a
 * conditional type: an operation, status or body the document no longer
 * has is a compile error here, never a silent `never`.
 */
type Json<T extends { content: { 'application/json': unknown } }> = T['content']['application/json'];

export type Problem = components['schemas']['Problem'];

/** An answer other than the operation's success status, with its problem body. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem) {
    super(`${status} ${problem.code}: ${problem.detail}`);
  }
}

export class RulesClient {
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;

  constructor(baseUrl: string, tenantId: string, apiKey: string) {
    this.#baseUrl = baseUrl;
    this.#headers = { 'x-api-key': apiKey, 'x-tenant-id': tenantId };
  }

  createRule(rule: Json<operations['createRule']['requestBody']>): Promise<Json<operations['createRule']['responses'][201]>> {
    return this.#send('POST', '/api/v1/rules', 201, rule);
  }

  publishContext(
    context: operations['publishContext']['parameters']['path']['context'],
  ): Promise<Json<operations['publishContext']['responses'][200]>> {
    return this.#send('POST', `/api/v1/contexts/${encodeURIComponent(context)}/publish`, 200);
  }

  validate(request: Json<operations['validateSingle']['requestBody']>): Promise<Json<operations['validateSingle']['responses'][200]>> {
    return this.#send('POST', '/api/v1/validation/validate', 200, request);
  }

  async #send<T>(method: string, path: string, expected: number, body?: unknown): Promise<T> {
    const headers = body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json' };
    const response = await fetch(this.#baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const answer: unknown = await response.json();
    if (response.status !== expected) throw new ApiError(response.status, answer as Problem);
    return answer as T;
  }
}

/** What the example's flow saw, field by field (each field read must exist in the generated types). */
export interface AmountCapOutcome {
  ruleId: string;
  ruleStatus: components['schemas']['Rule']['status'];
  ruleVersion: number;
  publishedIds: string[];
  rulesetVersion: number;
  isValid: boolean;
  failures: Array<Pick<components['schemas']['FailureRecord'], 'ruleCode' | 'message' | 'fieldPath' | 'actualValue' | 'expectedValue'>>;
}

/**
 * The example's flow: a rule that caps `amount`, its context published,
 * then a payload over the cap validated.
 */
export async function capAmount(client: RulesClient, context: string, amount: number): Promise<AmountCapOutcome> {
  const rule = await client.createRule({
    context,
    code: 'AMOUNT_LIMIT',
    name: 'Loan amount limit',
    fieldPath: 'amount',
    expression: 'amount <= 50000',
    message: 'Amount {{ $value }} exceeds {{ $expected }}',
  });
  const published = await client.publishContext(rule.context);
  const result = await client.validate({ context, payload: { amount } });
  return {
    ruleId: rule.id,
    ruleStatus: rule.status,
    ruleVersion: rule.version,
    publishedIds: published.published,
    rulesetVersion: published.rulesetVersion,
    isValid: result.isValid,
    failures: result.failures.map(({ ruleCode, message, fieldPath, actualValue, expectedValue }) => ({
      ruleCode, message, fieldPath, actualValue, expectedValue,
    })),
  };
}
