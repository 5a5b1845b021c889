/**
 * The rules-file commands against a running service (`--url`, `--key`):
 * plain requests to its HTTP API, so the service compiles, checks, audits
 * (as the key) and installs what it imports. The tenant is sent as
 * X-Tenant-Id; the key must be one of its admin keys.
 */
import type { ImpactReport } from '../rules/impact-report.ts';
import type { ImportResult } from '../storage/types.ts';
import type { FileWarning, RulesFile } from '../rules/rules-file.ts';
import type { TestOutcome } from '../rules/stored-tests.ts';
import { CommandError } from './cli-errors.ts';
import { exported, imported, tested } from './file-commands.ts';
import { reported } from './impact-command.ts';
import type { PublicSigningKey } from '../signing/module-signer.ts';
import { signingKeyOutput } from './signing-key-command.ts';
import type { RemoteCommand } from './parse-command.ts';
import { describeErrors, readRulesFile } from './rules-file-io.ts';
import type { CommandOutput } from './run-command.ts';

interface Remote {
  url: string;
  key: string;
}

/** The parts of a problem+json answer the CLI prints. */
interface Problem {
  code?: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Runs export, import, test, impact or signing-key through the service at `remote.url`. */
export async function runRemoteFileCommand(command: RemoteCommand, remote: Remote): Promise<CommandOutput> {
  const base = command.kind === 'signing-key' ? '' : `/api/v1/contexts/${encodeURIComponent(command.context)}`;
  switch (command.kind) {
    case 'export':
      return exported(await request<RulesFile>(remote, command.tenantId, 'GET', `${base}/export${command.draft ? '?from=draft' : ''}`), command.out);
    case 'import': {
      const file = await readRulesFile(command.file);
      const flags = (['dryRun', 'prune', 'publish', 'force'] as const).filter((flag) => command[flag]).map((flag) => `${flag}=true`);
      const query = flags.length === 0 ? '' : `?${flags.join('&')}`;
      return imported(await request<ImportResult & { warnings: FileWarning[] }>(remote, command.tenantId, 'POST', `${base}/import${query}`, file));
    }
    case 'test': {
      if (command.file === undefined) {
        return tested((await request<{ results: TestOutcome[] }>(remote, command.tenantId, 'POST', `${base}/tests/run`, { target: 'draft' })).results);
      }
      // A file's tests run as a test run runs stored ones, without storing
      // them: each payload against the draft rules, through POST /rules/test.
      const file = await readRulesFile(command.file);
      const results: TestOutcome[] = [];
      for (const test of file.tests ?? []) {
        const answer = await request<{ isValid: boolean; failures: Array<{ ruleCode: string }> }>(
          remote, command.tenantId, 'POST', '/api/v1/rules/test', { context: command.context, draft: true, payload: test.payload },
        );
        const failures = [...new Set(answer.failures.map((failure) => failure.ruleCode))];
        const wanted = test.expect.failures === undefined ? undefined : new Set(test.expect.failures);
        const ok = test.expect.isValid === answer.isValid
          && (wanted === undefined || (wanted.size === failures.length && failures.every((code) => wanted.has(code))));
        results.push({ name: test.name, ok, isValid: answer.isValid, failures });
      }
      return tested(results);
    }
    case 'impact':
      return reported(command, await request<ImpactReport>(remote, command.tenantId, 'POST', `${base}/impact`, { target: command.target, limit: command.limit }));
    case 'signing-key':
      return signingKeyOutput(await request<PublicSigningKey>(remote, command.tenantId!, 'GET', '/api/v1/signing-key'));
  }
}

/** One request to the service; its problem, as a CommandError, when it refuses. */
async function request<T>(remote: Remote, tenantId: string, method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${remote.url}${path}`, {
      method,
      headers: {
        'x-api-key': remote.key,
        'x-tenant-id': tenantId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new CommandError(`cannot reach ${remote.url}: ${(error as Error).message}`);
  }
  const answer: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const problem = (answer ?? {}) as Problem;
    const errors = Array.isArray(problem.errors) ? `\n${describeErrors(problem.errors)}` : '';
    throw new CommandError(`${response.status} ${problem.code ?? ''}: ${problem.detail ?? response.statusText}${errors}`);
  }
  return answer as T;
}
