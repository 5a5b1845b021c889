/**
 * The operator CLI run in process (runCli), as a script would see it: its
 * output and exit status, with the environment the test gives it.
 *
 * @example
 * const { run, runJson } = cliRunner(() => ({ RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' }));
 * expect((await run('migrate')).code).toBe(0);
 */
import { expect } from 'vitest';
import { runCli } from '../../src/cli/run-cli.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunner {
  run: (...args: string[]) => Promise<CliRun>;
  /** Runs with --json, expects exit 0, and parses what it printed. */
  runJson: (...args: string[]) => Promise<any>;
}

export function cliRunner(env: () => Record<string, string>): CliRunner {
  const run = async (...args: string[]): Promise<CliRun> => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(args, env(), { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  };
  const runJson = async (...args: string[]): Promise<any> => {
    const result = await run(...args, '--json');
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout);
  };
  return { run, runJson };
}
