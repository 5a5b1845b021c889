/**
 * A rule's decision table as CSV (docs/api.md, "Decision tables as CSV"):
 * GET /rules/{id}/table.csv answers its rows, PUT takes new rows as
 * `text/csv` and saves them as a new version of the rule, checked, compiled
 * and audited as a PUT of the rule is (`rule.update`).
 *
 * Its own plugin, so that its encapsulated scope takes `text/csv` bodies,
 * and only those, while every other route keeps taking JSON only.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { RuleHasNoTableError, TableCsvInvalidError } from '../domain-errors.ts';
import { ProblemError, type ProblemSpec } from '../errors.ts';
import { decodeUtf8Body, isIdentityEncoding } from '../http/json-body-parser.ts';
import { operation } from '../openapi/operation.ts';
import { ruleReviewer } from '../pool/rule-review.ts';
import { tableToCsv } from '../rules/table-csv.ts';
import { findTableRule, replaceTableRows, withoutByteOrderMark, type TableRule } from '../rules/table-rows-edit.ts';
import { idParamsSchema, originOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

const CSV_MEDIA_TYPE = /^text\/csv(?:; *charset=(?:utf-8|"utf-8"))?(?:; *header=present)?$/i;

const notCsv = (): ProblemSpec => ({ code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'Send the table as Content-Type: text/csv (UTF-8).' });
const noTable = (): ProblemSpec => ({
  code: 'NOT_FOUND', detail: 'The rule has no decision table: give it one with PUT /rules/{id} first; CSV carries only its rows.',
});
const badCsv = (errors: Array<{ path: string; message: string }>): ProblemSpec => ({ code: 'INVALID_BODY', detail: 'The CSV is invalid.', errors });

type ParserDone = (error: Error | null, body?: unknown) => void;

const versionQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    version: {
      type: 'string', pattern: '^[1-9][0-9]{0,8}$', description: 'The version the edit is based on; a stale one is 409. Default: the latest.', examples: ['3'],
    },
  },
} as const;

/**
 * Registers GET and PUT /rules/{id}/table.csv. Mounted by buildApp under
 * /api/v1 with `{ deps }`, beside rulesRoutes.
 *
 * @example
 * await app.register(ruleTableCsvRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const ruleTableCsvRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, config } = deps;
  // A table's compile check and warnings run on a management thread (rule-review.ts).
  const review = ruleReviewer({ config, pool: deps.pool, payloadSchemas: deps.payloadSchemas, storedPayloadSchemas: storage.payloadSchemas });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('text/csv', { parseAs: 'buffer' }, (request: FastifyRequest, body: string | Buffer, done: ParserDone) => {
    if (!CSV_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) return done(new ProblemError(notCsv()));
    if (!isIdentityEncoding(request.headers['content-encoding'])) return done(new ProblemError(notCsv()));
    try {
      const text = typeof body === 'string' ? body : decodeUtf8Body(body);
      done(null, withoutByteOrderMark(text));
    } catch (error) {
      done(error as Error);
    }
  });
  app.addContentTypeParser('*', (_request: FastifyRequest, _payload: unknown, done: ParserDone) => {
    done(new ProblemError(notCsv()));
  });
  app.setErrorHandler((error) => {
    throw (error as { code?: unknown }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? new ProblemError(notCsv()) : error;
  });

  /** The rules' own refusals as this route's problems; an unknown rule is the usual 404 (http/problem-mapping.ts). */
  const asProblem = (error: unknown): unknown => {
    if (error instanceof RuleHasNoTableError) return new ProblemError(noTable());
    if (error instanceof TableCsvInvalidError) return new ProblemError(badCsv(error.errors));
    return error;
  };
  const tableRule = (tenantId: string, id: string): Promise<TableRule> => findTableRule(storage.rules, tenantId, id).catch((error: unknown) => {
    throw asProblem(error);
  });

  app.get<{ Params: { id: string } }>('/rules/:id/table.csv', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'getRuleTableCsv',
        tag: 'Rules',
        summary: 'Read a rule\'s decision table as CSV',
        description: 'The rows of the rule\'s table (its latest version) as CSV (RFC 4180, UTF-8, CRLF): a header of the input names then '
          + 'the output names, then one line per row, its cells then its outputs (JSON, a plain string bare). `X-Rule-Version` is the '
          + 'version of the rule the rows are from: send it back as PUT\'s `?version=`.',
        answers: { 200: 'The rows as CSV; `X-Rule-Version`: the rule\'s version they are from.', 404: 'No rule with this id in the tenant, or the rule has no table.' },
      }),
      params: idParamsSchema,
      response: { 200: { content: { 'text/csv': { schema: { type: 'string', description: 'The table\'s rows as CSV.' } } } } },
    },
  }, async (request, reply) => {
    const rule = await tableRule(tenantOf(request), request.params.id);
    void reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${rule.code}.csv"`)
      // The version the rows are from: what PUT's ?version= takes to refuse an edit of rows that have moved on since.
      .header('x-rule-version', String(rule.version));
    return tableToCsv(rule.table);
  });

  app.put<{ Params: { id: string }; Body: string; Querystring: { version?: string } }>('/rules/:id/table.csv', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'putRuleTableCsv',
        tag: 'Rules',
        summary: 'Replace a rule\'s decision-table rows from CSV',
        description: 'Replaces the rows of the rule\'s table with the CSV body (`Content-Type: text/csv`, UTF-8 with or without a BOM) '
          + 'and saves a new version of the rule, checked and compiled as PUT /rules/{id}. The header must be the input names then the '
          + 'output names of the table as it is; its inputs, hit policy and noMatch stay as they are.',
        answers: {
          200: 'The rule with its new version (status draft), or unchanged when the rows are the same; with its warnings.',
          400: 'The CSV is invalid (a wrong header, a line with the wrong number of fields, a quote left open, more rows than '
            + 'MAX_TABLE_ROWS: `errors` names the line), is not UTF-8, or a row does not compile (`errors` names `table.rows[r].when[c]`).',
          404: 'No rule with this id in the tenant, or the rule has no table.',
          409: 'The version sent is not the latest, or the rule is archived.',
          413: 'The body is larger than MAX_BODY_BYTES.',
          415: 'The body is not sent as Content-Type: text/csv (UTF-8), or is compressed.',
        },
      }),
      consumes: ['text/csv'],
      params: idParamsSchema,
      querystring: versionQuerySchema,
      body: { type: 'string', description: 'The rows as CSV.', examples: ['product,country,maxAmount\r\n"""auto""","in [""US"", ""CA""]",50000\r\n-,-,1000\r\n'] },
      response: { 200: sharedRef('Rule') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const stored = await tableRule(tenantId, request.params.id);
    const basedOnVersion = request.query.version === undefined ? undefined : Number(request.query.version);
    const edit = { csv: request.body, basedOnVersion, origin: originOf(request) };
    const check = { maxTableRows: config.maxTableRows, assertCompiles: review.assertCompiles.bind(review, tenantId) };
    const updated = await replaceTableRows(storage.rules, tenantId, stored, edit, check).catch((error: unknown) => {
      throw asProblem(error);
    });
    return review.withWarnings(tenantId, updated);
  });
};
