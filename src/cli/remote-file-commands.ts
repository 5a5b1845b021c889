/**
 * The rules-file commands against a running service (`--url`, `--key`):
 * plain requests to its HTTP API, so the service compiles, checks, audits
 * (as the key) and installs what it imports. The tenant is sent as
 * X-Tenant-Id; the key must be one of its admin keys.
 */
import type { RulesFile } from '../rules/rules-file.ts';
import { CommandError } from './cli-errors.ts';
import { exported, imported, tested } from './file-commands.ts';
import type { FileCommand } from './parse-command.ts';
import { describeErrors, readRulesFile } from './rules-file-io.ts';
import type { CommandOutput } from './run-command.ts';

/** Runs export, import or test through the service at `remote.url`. */
export async function runRemoteFileCommand(command: FileCommand, remote: { url: string; key: string }): Promise<CommandOutput> {
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    let response: Response;
    try {
      response = await fetch(`${remote.url}/api/v1/contexts/${encodeURIComponent(command.context)}${path}`, {
        method,
        headers: {
          'x-api-key': remote.key,
          'x-tenant-id': command.tenantId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new CommandError(`cannot reach ${remote.url}: ${(error as Error).message}`);
    }
    const answer: any = await response.json().catch(() => null);
    if (!response.ok) {
      const errors = Array.isArray(answer?.errors) ? `\n${describeErrors(answer.errors)}` : '';
      throw new CommandError(`${response.status} ${answer?.code ?? ''}: ${answer?.detail ?? response.statusText}${errors}`);
    }
    return answer;
  };
  switch (command.kind) {
    case 'export':
      return exported((await call('GET', `/export${command.draft ? '?from=draft' : ''}`)) as RulesFile, command.out);
    case 'import': {
      const file = await readRulesFile(command.file);
      const flags = (['dryRun', 'prune', 'publish', 'force'] as const).filter((flag) => command[flag]).map((flag) => `${flag}=true`);
      return imported(await call('POST', `/import${flags.length === 0 ? '' : `?${flags.join('&')}`}`, file));
    }
    case 'test': {
      if (command.file === undefined) return tested((await call('POST', '/tests/run', { target: 'draft' })).results);
      // A file's tests are run as a test run runs stored ones, without storing them: against the draft, one POST /rules/test each.
      const file = await readRulesFile(command.file);
      const results = [];
      for (const test of file.tests ?? []) {
        const answer = await fetchTest(remote, command, test.payload);
        const failures = [...new Set<string>(answer.failures.map((failure: { ruleCode: string }) => failure.ruleCode))];
        const wanted = test.expect.failures === undefined ? undefined : new Set(test.expect.failures);
        const ok = test.expect.isValid === answer.isValid
          && (wanted === undefined || (wanted.size === failures.length && failures.every((code) => wanted.has(code))));
        results.push({ name: test.name, ok, isValid: answer.isValid as boolean, failures });
      }
      return tested(results);
    }
  }
}

/** POST /rules/test of a payload against the context's draft rules. */
async function fetchTest(remote: { url: string; key: string }, command: FileCommand, payload: unknown): Promise<any> {
  const response = await fetch(`${remote.url}/api/v1/rules/test`, {
    method: 'POST',
    headers: { 'x-api-key': remote.key, 'x-tenant-id': command.tenantId, 'content-type': 'application/json' },
    body: JSON.stringify({ context: command.context, draft: true, payload }),
  });
  const answer: any = await response.json().catch(() => null);
  if (!response.ok) throw new CommandError(`${response.status} ${answer?.code ?? ''}: ${answer?.detail ?? response.statusText}`);
  return answer;
}
