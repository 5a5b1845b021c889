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
import { exported, imported, tested } from './file-commands.ts';
import { reported, type ImpactCommand } from './impact-command.ts';
import type { FileCommand } from './parse-command.ts';
import { readRulesFile } from './rules-file-io.ts';
import { request, type Remote } from './service-request.ts';
import type { CommandOutput } from './run-command.ts';

/** Runs export, import, test-drafts or impact through the service at `remote.url`. */
export async function runRemoteFileCommand(command: FileCommand | ImpactCommand, remote: Remote): Promise<CommandOutput> {
  const base = `/api/v1/contexts/${encodeURIComponent(command.context)}`;
  switch (command.kind) {
    case 'export':
      return exported(await request<RulesFile>(remote, command.tenantId, 'GET', `${base}/export${command.draft ? '?from=draft' : ''}`), command.out);
    case 'import': {
      const file = await readRulesFile(command.file);
      const flags = (['dryRun', 'prune', 'publish', 'force'] as const).filter((flag) => command[flag]).map((flag) => `${flag}=true`);
      const query = flags.length === 0 ? '' : `?${flags.join('&')}`;
      return imported(await request<ImportResult & { warnings: FileWarning[] }>(remote, command.tenantId, 'POST', `${base}/import${query}`, file));
    }
    case 'test-drafts': {
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
      return tested(results, file.tests);
    }
    case 'impact':
      return reported(command, await request<ImpactReport>(remote, command.tenantId, 'POST', `${base}/impact`, { target: command.target, limit: command.limit }));
  }
}
