/**
 * The command line to a Command, checked completely before anything opens
 * the database: a wrong command line is exit 2 with nothing done.
 */
import { parseArgs } from 'node:util';
import { CONFIG_VARIABLE_BY_NAME, TENANT_ID_PATTERN } from '../config.ts';
import { CONTEXT_REGEX } from '../routes/schemas/rule-schemas.ts';
import type { ImpactTarget } from '../rules/impact-target.ts';
import type { Role } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { UsageError } from './cli-errors.ts';

export interface RateLimit {
  max: number;
  windowMs: number;
}

export type Command =
  | { kind: 'help' }
  | { kind: 'migrate' }
  | { kind: 'tenant-create'; tenantId: string }
  | { kind: 'rate-limit-show'; tenantId: string }
  /** `limit` null: back to the configured default. */
  | { kind: 'rate-limit-set'; tenantId: string; limit: RateLimit | null }
  | { kind: 'key-create'; tenantId: string; name: string; role: Role }
  | { kind: 'key-revoke'; tenantId: string; keyId: string }
  | { kind: 'key-list'; tenantId: string }
  | { kind: 'contexts'; tenantId: string }
  /** The module signing key; `tenantId` only names the tenant whose key reads it with --url. */
  | { kind: 'signing-key'; tenantId?: string }
  /** `out` absent: print the file. */
  | { kind: 'export'; tenantId: string; context: string; draft: boolean; out?: string }
  | { kind: 'import'; tenantId: string; context: string; file: string; dryRun: boolean; prune: boolean; publish: boolean; force: boolean }
  /** The file's tests against the file's own rules, offline: no database, no service. */
  | { kind: 'test'; file: string }
  /** The file's validator timed over its tests' payloads, whole and without each rule, offline. */
  | ({ kind: 'bench'; file: string } & BenchOptions)
  /** The same for a context's live (or draft) rules, over its stored tests' payloads or its newest `samples` recorded samples. */
  | ({ kind: 'bench-context'; tenantId: string; context: string; draft: boolean; samples?: number } & BenchOptions)
  /** The stored tests, or the file's (`file`), against the context's drafts. */
  | { kind: 'test-drafts'; tenantId: string; context: string; file?: string }
  | { kind: 'impact'; tenantId: string; context: string; target: ImpactTarget; limit: number }
  /** A rule's decision-table rows as CSV; `out` absent: print them. */
  | { kind: 'table-export'; tenantId: string; ruleId: string; out?: string }
  /** The rule's rows replaced by those of the CSV file; `version`: the rule's version the file was made from (--version). */
  | { kind: 'table-import'; tenantId: string; ruleId: string; file: string; version?: number };

/** How long `bench` times each validator, and how many rules it times without. */
export interface BenchOptions {
  /** --time: milliseconds per task; absent, worked out from the number of tasks (src/cli/rule-costs.ts). */
  timeMs?: number;
  /** --top: at most this many rules are timed with and without. */
  top: number;
}

/** --top's default: a 100-rule context is measured whole in well under a minute. */
export const DEFAULT_BENCH_TOP = 100;
/** --time's bounds, in milliseconds. */
const BENCH_TIME_MS = { min: 1, max: 60_000 };

/** The commands on a rule's decision table as CSV. */
export type TableCommand = Extract<Command, { kind: 'table-export' | 'table-import' }>;

/** The commands on rules files that read or change a context. */
export type FileCommand = Extract<Command, { kind: 'export' | 'import' | 'test-drafts' }>;

/**
 * The commands that can also run against a service over HTTP (--url),
 * each through the API route that does the same: every command on a
 * tenant except `tenant create`, which the API does not offer, and
 * `signing-key`, read with the given tenant's key.
 */
export const REMOTE_KINDS = [
  'rate-limit-show', 'rate-limit-set', 'key-create', 'key-revoke', 'key-list', 'contexts', 'export', 'import', 'test-drafts', 'impact', 'signing-key',
  'table-export', 'table-import', 'bench-context',
] as const satisfies ReadonlyArray<Command['kind']>;

export type RemoteCommand = Extract<Command, { kind: (typeof REMOTE_KINDS)[number] }>;

/** Whether `command` has a remote equivalent (see REMOTE_KINDS). */
export function isRemoteCommand<C extends { kind: string }>(command: C): command is Extract<C, { kind: RemoteCommand['kind'] }> {
  return (REMOTE_KINDS as readonly string[]).includes(command.kind);
}

export interface CommandLine {
  command: Command;
  /** Print JSON instead of text. */
  json: boolean;
  /**
   * --url: run a remote command against that service instead of the
   * database, with the tenant's admin key; `key` absent means "read it from
   * stdin" (--key-stdin), which runCli does before the command runs.
   */
  remote?: { url: string; key?: string };
}

/** The environment variable the remote commands read the admin key from when the command line gives none. */
export const API_KEY_VARIABLE = 'RULES_API_KEY';

/** The columns are PostgreSQL `integer`s. */
const MAX_INT4 = 2_147_483_647;
/** As POST /api-keys. */
const MAX_KEY_NAME = 200;
const ROLES: readonly Role[] = ['admin', 'validator', 'client'];

/**
 * Parses `argv` (without node and the script); `env` gives RULES_API_KEY.
 *
 * @example
 * parseCommandLine(['key', 'create', 'acme', 'ci', '--role', 'validator']);
 * // { command: { kind: 'key-create', tenantId: 'acme', name: 'ci', role: 'validator' }, json: false }
 */
export function parseCommandLine(argv: readonly string[], env: Record<string, string | undefined> = {}): CommandLine {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const json = values.json === true;
  if (values.help === true) return { command: { kind: 'help' }, json };
  const command = draftCommand(positionals);
  const remote = remoteOf(command, values, env);
  if (values.role !== undefined && command.kind !== 'key-create') {
    throw new UsageError('--role applies only to "key create"');
  }
  if (command.kind === 'key-create') {
    if (values.role === undefined) throw new UsageError('"key create" needs --role admin, --role validator or --role client');
    if (!(ROLES as readonly string[]).includes(values.role)) {
      throw new UsageError(`--role must be admin, validator or client, got "${values.role}"`);
    }
    return { command: { ...command, role: values.role as Role }, json, remote };
  }
  const fileFlags = {
    draft: ['export', 'bench-context'], out: ['export'], 'dry-run': ['import'], prune: ['import'], publish: ['import'], force: ['import'],
    target: ['impact'], limit: ['impact'], time: ['bench', 'bench-context'], top: ['bench', 'bench-context'], samples: ['bench-context'],
  } as const;
  for (const [flag, kinds] of Object.entries(fileFlags)) {
    if (values[flag as keyof typeof fileFlags] !== undefined && !(kinds as readonly string[]).includes(command.kind)) {
      throw new UsageError(`--${flag} applies only to ${kinds.map((kind) => `"${kind === 'bench-context' ? 'bench <tenant> <context>' : kind}"`).join(' and ')}`);
    }
  }
  if (values.version !== undefined) {
    if (command.kind !== 'table-import') throw new UsageError('--version applies only to "table import"');
    return { command: { ...command, version: integer('--version', values.version, 1) }, json, remote };
  }
  if (command.kind === 'bench' || command.kind === 'bench-context') {
    const timeMs = values.time === undefined ? undefined : integer('--time', values.time, BENCH_TIME_MS.min, BENCH_TIME_MS.max);
    const top = values.top === undefined ? DEFAULT_BENCH_TOP : integer('--top', values.top, 1);
    if (command.kind === 'bench') return { command: { ...command, timeMs, top }, json, remote };
    if (values.samples !== undefined && remote !== undefined) {
      // The API serves one sample by id and no listing of them.
      throw new UsageError('--samples reads the recorded samples from the database (RULES_DATA_DIR or DATABASE_URL), which the API does not list: run it without --url');
    }
    const samples = values.samples === undefined ? undefined : integer('--samples', values.samples, 1, TUNING.impactMaxSamples.value);
    return { command: { ...command, draft: values.draft === true, samples, timeMs, top }, json, remote };
  }
  if (command.kind === 'export') return { command: { ...command, draft: values.draft === true, out: values.out }, json, remote };
  if (command.kind === 'import') {
    const flags = { dryRun: values['dry-run'] === true, prune: values.prune === true, publish: values.publish === true, force: values.force === true };
    return { command: { ...command, ...flags }, json, remote };
  }
  if (command.kind === 'impact') {
    const target = values.target === undefined ? 'draft' : impactTargetOf(values.target);
    const limit = values.limit === undefined ? TUNING.impactDefaultSamples.value : integer('--limit', values.limit, 1, TUNING.impactMaxSamples.value);
    return { command: { ...command, target, limit }, json, remote };
  }
  return { command, json, remote };
}

/**
 * --url and where the admin key comes from. The command line wins over the
 * environment: --key-stdin (the key on stdin, seen by no other process) or
 * --key KEY (visible in the process list), else RULES_API_KEY.
 */
function remoteOf(command: Draft, values: ReturnType<typeof parseOptions>['values'], env: Record<string, string | undefined>): CommandLine['remote'] {
  const keyStdin = values['key-stdin'] === true;
  if (values.url === undefined) {
    if (values.key !== undefined || keyStdin) throw new UsageError('--key and --key-stdin go with --url');
    return undefined;
  }
  if (!isRemoteCommand(command)) {
    throw new UsageError(`--url does not apply to "${command.kind === 'tenant-create' ? 'tenant create' : command.kind}": ${REMOTE_HELP}`);
  }
  if (command.kind === 'signing-key' && command.tenantId === undefined) throw new UsageError('"signing-key --url" needs the <tenant> of the key');
  if (!/^https?:\/\/[^\s]+$/.test(values.url)) throw new UsageError(`--url must be an http(s) URL, got "${values.url}"`);
  if (values.key !== undefined && keyStdin) throw new UsageError('give the key one way: --key-stdin or --key, not both');
  const url = values.url.replace(/\/+$/, '');
  if (keyStdin) return { url };
  const key = values.key ?? env[API_KEY_VARIABLE];
  if (key === undefined || key === '') {
    throw new UsageError(`--url needs the tenant's admin key: set ${API_KEY_VARIABLE}, or pipe the key with --key-stdin`);
  }
  return { url, key };
}

/** Which commands take --url, for the usage errors. */
export const REMOTE_HELP = 'it applies to every command on a tenant except "tenant create", and to "signing-key <tenant>" '
  + '(migrate, "test FILE" and "bench FILE" need no service)';

/** `--target`: draft, or a ruleset version number. */
function impactTargetOf(raw: string): ImpactTarget {
  if (raw === 'draft') return raw;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--target must be draft or a ruleset version number, got "${raw}"`);
  return integer('--target', raw, 1);
}

function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      role: { type: 'string' },
      json: { type: 'boolean' },
      draft: { type: 'boolean' },
      out: { type: 'string' },
      'dry-run': { type: 'boolean' },
      prune: { type: 'boolean' },
      publish: { type: 'boolean' },
      force: { type: 'boolean' },
      target: { type: 'string' },
      limit: { type: 'string' },
      time: { type: 'string' },
      top: { type: 'string' },
      samples: { type: 'string' },
      version: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      'key-stdin': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** A command as the positionals give it; `key create` gets its role from --role. */
type Draft = Exclude<Command, { kind: 'key-create' }> | { kind: 'key-create'; tenantId: string; name: string };

function draftCommand(args: readonly string[]): Draft {
  const [first, second, ...rest] = args;
  if (first === undefined) throw new UsageError('no command given');
  if (first === 'help') return { kind: 'help' };
  if (first === 'migrate') {
    expectCount('migrate', args.slice(1), 0);
    return { kind: 'migrate' };
  }
  if (first === 'signing-key') {
    if (args.length > 2) throw new UsageError('usage: signing-key [<tenant>]');
    return second === undefined ? { kind: 'signing-key' } : { kind: 'signing-key', tenantId: tenantOf(second) };
  }
  if (first === 'contexts') {
    expectCount('contexts <tenant>', args.slice(1), 1);
    return { kind: 'contexts', tenantId: tenantOf(second) };
  }
  if (first === 'tenant') {
    if (second === 'create') {
      expectCount('tenant create <tenant>', rest, 1);
      return { kind: 'tenant-create', tenantId: tenantOf(rest[0]) };
    }
    if (second === 'rate-limit') return rateLimitCommand(rest);
    throw new UsageError(`unknown tenant command "${second ?? ''}" (create, rate-limit)`);
  }
  if (first === 'key') {
    if (second === 'create') {
      expectCount('key create <tenant> <name> --role admin|validator|client', rest, 2);
      const name = rest[1];
      if (name.length === 0 || name.length > MAX_KEY_NAME) {
        throw new UsageError(`the key name must be 1-${MAX_KEY_NAME} characters`);
      }
      return { kind: 'key-create', tenantId: tenantOf(rest[0]), name };
    }
    if (second === 'revoke') {
      expectCount('key revoke <tenant> <keyId>', rest, 2);
      return { kind: 'key-revoke', tenantId: tenantOf(rest[0]), keyId: rest[1] };
    }
    if (second === 'list') {
      expectCount('key list <tenant>', rest, 1);
      return { kind: 'key-list', tenantId: tenantOf(rest[0]) };
    }
    throw new UsageError(`unknown key command "${second ?? ''}" (create, revoke, list)`);
  }
  if (first === 'export') {
    expectCount('export <tenant> <context> [--draft] [--out FILE]', args.slice(1), 2);
    return { kind: 'export', tenantId: tenantOf(second), context: contextOf(rest[0]), draft: false };
  }
  if (first === 'import') {
    expectCount('import <tenant> <context> FILE [--dry-run] [--prune] [--publish] [--force]', args.slice(1), 3);
    const flags = { dryRun: false, prune: false, publish: false, force: false };
    return { kind: 'import', tenantId: tenantOf(second), context: contextOf(rest[0]), file: rest[1], ...flags };
  }
  if (first === 'test') {
    if (args.length === 2) return { kind: 'test', file: second };
    // The old form, which ran a file's tests against the drafts and ignored its rules: refused, not reinterpreted.
    if (args.length === 3 || args.length === 4) {
      throw new UsageError('"test FILE" tests a rules file offline, against its own rules; to run tests against a context\'s drafts: test-drafts <tenant> <context> [FILE]');
    }
    throw new UsageError('expected: test FILE');
  }
  if (first === 'test-drafts') {
    if (args.length !== 3 && args.length !== 4) throw new UsageError('expected: test-drafts <tenant> <context> [FILE]');
    return { kind: 'test-drafts', tenantId: tenantOf(second), context: contextOf(rest[0]), file: rest[1] };
  }
  if (first === 'table') return tableCommand(second, rest);
  if (first === 'bench') {
    if (args.length === 2) return { kind: 'bench', file: second, top: DEFAULT_BENCH_TOP };
    if (args.length === 3) return { kind: 'bench-context', tenantId: tenantOf(second), context: contextOf(rest[0]), draft: false, top: DEFAULT_BENCH_TOP };
    throw new UsageError('expected: bench FILE, or bench <tenant> <context>');
  }
  if (first === 'impact') {
    expectCount('impact <tenant> <context> [--target draft|N] [--limit N]', args.slice(1), 2);
    return { kind: 'impact', tenantId: tenantOf(second), context: contextOf(rest[0]), target: 'draft', limit: TUNING.impactDefaultSamples.value };
  }
  throw new UsageError(`unknown command "${first}"`);
}

function contextOf(value: string | undefined): string {
  if (value === undefined || !CONTEXT_REGEX.test(value)) {
    throw new UsageError(`"${value ?? ''}" is not a context name (1-100 characters of letters, digits, "_", ".", ":" and "-", starting with a letter or digit)`);
  }
  return value;
}

function tableCommand(action: string | undefined, rest: readonly string[]): Draft {
  if (action === 'export') {
    if (rest.length !== 2 && rest.length !== 3) throw new UsageError('expected: table export <tenant> <rule-id> [FILE]');
    return { kind: 'table-export', tenantId: tenantOf(rest[0]), ruleId: rest[1], out: rest[2] };
  }
  if (action === 'import') {
    expectCount('table import <tenant> <rule-id> FILE [--version N]', rest, 3);
    return { kind: 'table-import', tenantId: tenantOf(rest[0]), ruleId: rest[1], file: rest[2] };
  }
  throw new UsageError(`unknown table command "${action ?? ''}" (export, import)`);
}

function rateLimitCommand(rest: readonly string[]): Draft {
  const usage = 'tenant rate-limit <tenant> [<max> <windowMs> | default]';
  if (rest.length === 1) return { kind: 'rate-limit-show', tenantId: tenantOf(rest[0]) };
  if (rest.length === 2 && rest[1] === 'default') return { kind: 'rate-limit-set', tenantId: tenantOf(rest[0]), limit: null };
  if (rest.length !== 3) throw new UsageError(`expected: ${usage}`);
  return {
    kind: 'rate-limit-set',
    tenantId: tenantOf(rest[0]),
    // The bounds of the configured default budget apply to a tenant's own.
    limit: {
      max: integer('<max>', rest[1], CONFIG_VARIABLE_BY_NAME.RATE_LIMIT_MAX.min),
      windowMs: integer('<windowMs>', rest[2], CONFIG_VARIABLE_BY_NAME.RATE_LIMIT_WINDOW_MS.min),
    },
  };
}

function expectCount(usage: string, args: readonly string[], count: number): void {
  if (args.length !== count) throw new UsageError(`expected: ${usage}`);
}

function tenantOf(value: string | undefined): string {
  if (value === undefined || !TENANT_ID_PATTERN.test(value)) {
    throw new UsageError(`"${value ?? ''}" is not a tenant id (1-63 characters of a-z, 0-9, "_" and "-", starting with a letter or digit)`);
  }
  return value;
}

function integer(name: string, raw: string, min: number, max = MAX_INT4): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new UsageError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}
