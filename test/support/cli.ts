/**
 * The operator CLI run in process (runCli), as a script would see it: its
 * output and exit status, with the environment the test gives it.
 *
 * @example
 * const { run, runJson } = cliRunner(() => ({ RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' }));
 * expect((await run('migrate')).code).toBe(0);
 */
import { expect } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import { createStorage } from '../../src/storage/create-storage.ts';

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

/**
 * Runs `body` with the service up, in process, on the database `env`
 * names, for the CLI's remote commands (--url); the CLI may not open the
 * embedded database meanwhile.
 */
export async function withService(env: Record<string, string>, body: (url: string) => Promise<void>): Promise<void> {
  const config = loadConfig({ ...env, LOG_LEVEL: 'silent', PORT: '0' });
  const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const app = await buildApp({ config, storage });
  try {
    await body(await app.listen({ host: '127.0.0.1', port: 0 }));
  } finally {
    await app.close();
    await storage.close();
  }
}
