/**
 * Configuration: read from the environment once at start, validated, frozen.
 * A bad value stops the start with a message naming the variable; an empty
 * value means unset (product.md section 9).
 */
import { isIP } from 'node:net';

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
  /** Prepended to every Redis key the service writes, so deployments (and test runs) can share one Redis. */
  readonly redisKeyPrefix: string;
  /** Fastify's trustProxy: which proxies' X-Forwarded-For to believe for the client address (per-address rate limit). */
  readonly trustProxy: boolean | number | string[];
  readonly bootstrapTenants: readonly BootstrapTenant[] | undefined;
  readonly rateLimitMax: number;
  readonly rateLimitWindowMs: number;
  readonly maxBodyBytes: number;
  readonly maxBatchItems: number;
  readonly maxTransactionContexts: number;
  readonly maxPayloadDepth: number;
  readonly maxExpressionLength: number;
  readonly maxRulesPerContext: number;
  /** Estimated size of one validation answer's failures; larger answers are refused (400). */
  readonly maxAnswerBytes: number;
  /** Compiled validators kept in memory per process (LRU beyond it). */
  readonly validatorCacheSize: number;
  /** Estimated heap those validators may hold together, in MiB (LRU beyond it). */
  readonly validatorCacheMb: number;
  readonly workers: number;
  /** Longest time a starting process spends compiling likely validators before it serves; 0: none (src/validators/warm-start.ts). */
  readonly warmStartMs: number;
  /** A request that has not arrived in full after this long is refused and its connection closed. */
  readonly requestTimeoutMs: number;
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
    redisKeyPrefix: redisKeyPrefix(read('REDIS_KEY_PREFIX')),
    trustProxy: parseTrustProxy(read('TRUST_PROXY')),
    bootstrapTenants: parseBootstrapTenants(read('RULES_BOOTSTRAP_TENANTS')),
    rateLimitMax: integer('RATE_LIMIT_MAX', 6000, 1),
    rateLimitWindowMs: integer('RATE_LIMIT_WINDOW_MS', 60_000, 100),
    maxBodyBytes: integer('MAX_BODY_BYTES', 1_048_576, 1024),
    maxBatchItems: integer('MAX_BATCH_ITEMS', 1000, 1),
    maxTransactionContexts: integer('MAX_TRANSACTION_CONTEXTS', 20, 1),
    maxPayloadDepth: integer('MAX_PAYLOAD_DEPTH', 64, 1, 1000),
    maxExpressionLength: integer('MAX_EXPRESSION_LENGTH', 4096, 16, 1_000_000),
    maxRulesPerContext: integer('MAX_RULES_PER_CONTEXT', 5000, 1),
    maxAnswerBytes: integer('MAX_ANSWER_BYTES', 16_777_216, 65_536, 268_435_456),
    validatorCacheSize: integer('VALIDATOR_CACHE_SIZE', 1000, 1),
    validatorCacheMb: integer('VALIDATOR_CACHE_MB', 1024, 1, 1_048_576),
    workers,
    warmStartMs: integer('WARM_START_MS', 15_000, 0, 600_000),
    requestTimeoutMs: integer('REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    metricsTenantLabels: boolean('METRICS_TENANT_LABELS', false),
    logLevel,
  });
}

const REDIS_KEY_PREFIX_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

function redisKeyPrefix(raw: string | undefined): string {
  if (raw === undefined) return 'rules:';
  if (!REDIS_KEY_PREFIX_PATTERN.test(raw)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1-64 characters of [A-Za-z0-9_.:-]');
  }
  return raw;
}

/**
 * TRUST_PROXY: unset or false trusts no proxy (the client address is the
 * peer's); true trusts every hop (only behind a proxy that overwrites
 * X-Forwarded-For); a number trusts that many hops; otherwise a
 * comma-separated list of proxy addresses or CIDR ranges.
 */
function parseTrustProxy(raw: string | undefined): boolean | number | string[] {
  if (raw === undefined || /^(false|0|no)$/i.test(raw)) return false;
  if (/^(true|yes)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const version = isIP(address);
    const maxBits = version === 6 ? 128 : 32;
    if (version === 0 || extra !== undefined || (bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > maxBits))) {
      throw new ConfigError('TRUST_PROXY', `must be true, false, a hop count or comma-separated addresses/CIDR ranges, got "${entry}"`);
    }
  }
  return entries;
}

function parseBootstrapTenants(raw: string | undefined): BootstrapTenant[] | undefined {
  if (raw === undefined) return undefined;
  const name = 'RULES_BOOTSTRAP_TENANTS';
  const tenants = raw.split(',').map((pair, index) => {
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
  // A key identifies its tenant: one key for two tenants could only ever be registered for one.
  const firstWithKey = new Map<string, number>();
  tenants.forEach(({ tenantId, adminKey }, index) => {
    const first = firstWithKey.get(adminKey);
    if (first !== undefined && tenants[first].tenantId !== tenantId) {
      throw new ConfigError(name, `entries ${first + 1} (${tenants[first].tenantId}) and ${index + 1} (${tenantId}) have the same key; give each tenant its own`);
    }
    firstWithKey.set(adminKey, first ?? index);
  });
  return tenants;
}
