/**
 * The command line to a Command, checked completely before anything opens
 * the database: a wrong command line is exit 2 with nothing done.
 */
import { parseArgs } from 'node:util';
import { CONFIG_VARIABLE_BY_NAME, TENANT_ID_PATTERN } from '../config.ts';
import type { Role } from '../storage/types.ts';
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
  | { kind: 'contexts'; tenantId: string };

export interface CommandLine {
  command: Command;
  /** Print JSON instead of text. */
  json: boolean;
}

/** The columns are PostgreSQL `integer`s. */
const MAX_INT4 = 2_147_483_647;
/** As POST /api-keys. */
const MAX_KEY_NAME = 200;
const ROLES: readonly Role[] = ['admin', 'validator'];

/**
 * Parses `argv` (without node and the script).
 *
 * @example
 * parseCommandLine(['key', 'create', 'acme', 'ci', '--role', 'validator']);
 * // { command: { kind: 'key-create', tenantId: 'acme', name: 'ci', role: 'validator' }, json: false }
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
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
  if (values.role !== undefined && command.kind !== 'key-create') {
    throw new UsageError('--role applies only to "key create"');
  }
  if (command.kind === 'key-create') {
    if (values.role === undefined) throw new UsageError('"key create" needs --role admin or --role validator');
    if (!(ROLES as readonly string[]).includes(values.role)) {
      throw new UsageError(`--role must be admin or validator, got "${values.role}"`);
    }
    return { command: { ...command, role: values.role as Role }, json };
  }
  return { command, json };
}

function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      role: { type: 'string' },
      json: { type: 'boolean' },
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
      expectCount('key create <tenant> <name> --role admin|validator', rest, 2);
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
  throw new UsageError(`unknown command "${first}"`);
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

function integer(name: string, raw: string, min: number): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > MAX_INT4) throw new UsageError(`${name} must be between ${min} and ${MAX_INT4}, got ${raw}`);
  return value;
}
