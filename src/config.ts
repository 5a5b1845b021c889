/**
 * Configuration: read from the environment once at start, validated, frozen.
 * A bad value stops the start with a message naming the variable; an empty
 * value means unset (product.md section 9).
 */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface BootstrapTenant {
  tenantId: string;
  adminKey: string;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
  readonly bootstrapTenants: readonly BootstrapTenant[] | undefined;
  readonly rateLimitMax: number;
  readonly rateLimitWindowMs: number;
  readonly maxBodyBytes: number;
  readonly maxBatchItems: number;
  readonly maxTransactionContexts: number;
  readonly maxPayloadDepth: number;
  readonly maxExpressionLength: number;
  readonly maxRulesPerContext: number;
  /** Compiled validators kept in memory per process (LRU beyond it). */
  readonly validatorCacheSize: number;
  readonly workers: number;
  readonly shutdownTimeoutMs: number;
  readonly metricsTenantLabels: boolean;
  readonly logLevel: LogLevel;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

/** Tenant ids of product.md section 5. */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const BOOTSTRAP_KEY_PATTERN = /^[A-Za-z0-9_-]{22,}$/;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

/** Reads and validates the configuration. Throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const integer = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  };

  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    throw new ConfigError(name, `must be true or false, got "${raw}"`);
  };

  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(name, 'must be a URL');
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    }
    return raw;
  };

  const logLevel = (read('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }

  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const workers = integer('WORKERS', 1, 1, 64);
  if (workers > 1 && databaseUrl === undefined) {
    throw new ConfigError('WORKERS', 'above 1 needs DATABASE_URL (the embedded database belongs to one process)');
  }

  return Object.freeze({
    port: integer('PORT', 3000, 0, 65535),
    host: read('HOST') ?? '127.0.0.1',
    databaseUrl,
    dataDir: read('RULES_DATA_DIR') ?? './data',
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    bootstrapTenants: parseBootstrapTenants(read('RULES_BOOTSTRAP_TENANTS')),
    rateLimitMax: integer('RATE_LIMIT_MAX', 6000, 1),
    rateLimitWindowMs: integer('RATE_LIMIT_WINDOW_MS', 60_000, 100),
    maxBodyBytes: integer('MAX_BODY_BYTES', 1_048_576, 1024),
    maxBatchItems: integer('MAX_BATCH_ITEMS', 1000, 1),
    maxTransactionContexts: integer('MAX_TRANSACTION_CONTEXTS', 20, 1),
    maxPayloadDepth: integer('MAX_PAYLOAD_DEPTH', 64, 1, 1000),
    maxExpressionLength: integer('MAX_EXPRESSION_LENGTH', 4096, 16, 1_000_000),
    maxRulesPerContext: integer('MAX_RULES_PER_CONTEXT', 5000, 1),
    validatorCacheSize: integer('VALIDATOR_CACHE_SIZE', 1000, 1),
    workers,
    shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    metricsTenantLabels: boolean('METRICS_TENANT_LABELS', false),
    logLevel,
  });
}

function parseBootstrapTenants(raw: string | undefined): BootstrapTenant[] | undefined {
  if (raw === undefined) return undefined;
  const name = 'RULES_BOOTSTRAP_TENANTS';
  return raw.split(',').map((pair, index) => {
    const separator = pair.indexOf(':');
    const tenantId = separator < 0 ? pair.trim() : pair.slice(0, separator).trim();
    const adminKey = separator < 0 ? '' : pair.slice(separator + 1).trim();
    if (!TENANT_ID_PATTERN.test(tenantId)) {
      throw new ConfigError(name, `entry ${index + 1}: tenant id must match ${TENANT_ID_PATTERN.source}`);
    }
    if (!BOOTSTRAP_KEY_PATTERN.test(adminKey)) {
      throw new ConfigError(name, `entry ${index + 1} (${tenantId}): the key must be at least 22 characters of [A-Za-z0-9_-]`);
    }
    return { tenantId, adminKey };
  });
}
