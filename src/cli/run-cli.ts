/**
 * The operator CLI (`npm run cli -- <command>`): parse the command line,
 * read the service's configuration, open the database, run one command,
 * close. Exit status: 0 done, 1 the command failed, 2 the command line is
 * wrong (see cli-errors.ts).
 */
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { createStorage } from '../storage/create-storage.ts';
import { DataDirLockedError } from '../storage/data-dir-lock.ts';
import { migrateToLatest } from '../storage/migrate-to-latest.ts';
import { benchFile, benchRemoteContext } from './bench-command.ts';
import { CommandError, UsageError } from './cli-errors.ts';
import { testFileOffline } from './offline-test.ts';
import { isRemoteCommand, parseCommandLine, type CommandLine, type RemoteCommand } from './parse-command.ts';
import { runRemoteFileCommand } from './remote-file-commands.ts';
import { runRemoteTableCommand } from './remote-table-commands.ts';
import { runRemoteTenantCommand } from './remote-tenant-commands.ts';
import { runCommand, type CommandOutput } from './run-command.ts';
import { USAGE } from './usage.ts';

/** Where the CLI reads and writes; process streams in production, buffers in tests. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The first line of standard input, read only for --key-stdin; absent, stdin is empty. */
  stdinLine?(): Promise<string>;
}

/**
 * Runs the CLI and resolves to its exit status. Never throws.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), process.env, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });
 */
export async function runCli(argv: readonly string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  let line: CommandLine;
  try {
    line = parseCommandLine(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // With no arguments at all, the whole usage is the useful answer.
    io.stderr(argv.length === 0 ? USAGE : `error: ${error.message}\nRun with --help for usage.\n`);
    return error.exitCode;
  }
  if (line.command.kind === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  try {
    const output = await execute(line, env, io);
    if (line.json) io.stdout(`${JSON.stringify(output.json, null, 2)}\n`);
    else io.stdout(output.verbatim === true ? output.text : `${output.text}\n`);
    return output.exitCode ?? 0;
  } catch (error) {
    io.stderr(`error: ${messageOf(error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

async function execute(line: CommandLine, env: Record<string, string | undefined>, io: CliIo): Promise<CommandOutput> {
  const { command, remote } = line;
  if (command.kind === 'help') return { text: USAGE, json: null };
  // Against a service: its configuration and database are its own.
  if (remote !== undefined && isRemoteCommand(command)) {
    const service = { url: remote.url, key: remote.key ?? (await keyFromStdin(io)) };
    // Compiled and timed here, with this machine's limits: only the rules come from the service.
    if (command.kind === 'bench-context') return benchRemoteContext(command, service, loadConfig(env));
    if (isRemoteFileCommand(command)) return runRemoteFileCommand(command, service);
    if (command.kind === 'table-export' || command.kind === 'table-import') return runRemoteTableCommand(command, service);
    return runRemoteTenantCommand(command, service);
  }
  const config = loadConfig(env);
  // Offline: the file's own rules and tests; no database is opened.
  if (command.kind === 'test') return testFileOffline(command.file, config);
  if (command.kind === 'bench') return benchFile(command, config);
  const location = databaseLocation(env, config);
  if (command.kind === 'migrate') {
    const applied = await migrateToLatest(location);
    return {
      text: applied.length === 0 ? 'The database is up to date.' : `Applied ${applied.length} migration(s): ${applied.join(', ')}.`,
      json: { applied },
    };
  }
  const storage = await createStorage(location);
  try {
    return await runCommand(command, storage, config);
  } finally {
    await storage.close();
  }
}

/**
 * The database the environment points at. Unlike the server, which
 * defaults to ./data, the CLI needs one named: run from the wrong folder
 * it would otherwise create an empty database there and put tenants and
 * keys in it, where no server looks.
 */
function databaseLocation(env: Record<string, string | undefined>, config: Config): { databaseUrl?: string; dataDir: string } {
  const given = (name: string) => (env[name]?.trim() ?? '') !== '';
  if (!given('DATABASE_URL') && !given('RULES_DATA_DIR')) {
    throw new CommandError(
      'no database given: set DATABASE_URL (PostgreSQL) or RULES_DATA_DIR (the embedded database\'s folder, ' +
      'e.g. RULES_DATA_DIR=./data for the one `npm start` uses), or run against a service with --url',
    );
  }
  return { databaseUrl: config.databaseUrl, dataDir: config.dataDir };
}

function isRemoteFileCommand(command: RemoteCommand): command is Extract<RemoteCommand, { kind: 'export' | 'import' | 'test-drafts' | 'impact' }> {
  return command.kind === 'export' || command.kind === 'import' || command.kind === 'test-drafts' || command.kind === 'impact';
}

/** --key-stdin: the key is the first line of stdin, without surrounding blanks. */
async function keyFromStdin(io: CliIo): Promise<string> {
  const key = (await io.stdinLine?.() ?? '').trim();
  if (key === '') throw new UsageError('--key-stdin: no key on stdin (pipe it in, e.g. from a secrets file)');
  return key;
}

/** What the operator reads: our own errors as they are, others with their kind. */
function messageOf(error: unknown): string {
  if (error instanceof CommandError || error instanceof ConfigError || error instanceof DataDirLockedError) return error.message;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
