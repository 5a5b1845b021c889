/**
 * Configuration: read from the environment once at start, validated, frozen.
 * A bad value stops the start with a message naming the variable; an empty
 * value means unset. CONFIG_VARIABLES lists every variable with its
 * default, bounds and meaning, and is what loadConfig reads by. The fixed
 * tunables, which are not configurable, are in tuning.ts.
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
  /** Threads of the management pool (src/pool/); 0: one less than the cores, at least 1. */
  readonly poolThreads: number;
  /** Heap each of those threads may grow to, in MiB. */
  readonly poolWorkerMemoryMb: number;
  /** Threads of the compile lane (COMPILE_THREADS). */
  readonly compileThreads: number;
  /** Heavy management operations one tenant may have waiting or running in a process; more get 429. */
  readonly operationsPerTenant: number;
  /** Wall time one heavy management operation may take, in milliseconds. */
  readonly operationTimeBudgetMs: number;
  /** Bytes of results one heavy management operation may answer; past them the list is cut (`truncated`). */
  readonly operationAnswerMaxBytes: number;
  /** Longest time a starting process spends compiling likely validators before it serves; 0: none (src/validators/warm-start.ts). */
  readonly warmStartMs: number;
  /** A request that has not arrived in full after this long is refused and its connection closed. */
  readonly requestTimeoutMs: number;
  /** After SIGTERM the listener keeps accepting this long, before the drain of what is in flight (docs/operations.md, "Shutdown"). */
  readonly shutdownDrainMs: number;
  /** After the drain period, how long requests in flight may take before the process stops anyway. */
  readonly shutdownTimeoutMs: number;
  /**
   * Event-loop delay (p99 of a half second), in ms, which exceeded two half seconds in a row makes the
   * process shed management requests and report not ready; 0: never (src/overload/overload-monitor.ts).
   */
  readonly maxEventLoopDelayMs: number;
  readonly metricsTenantLabels: boolean;
  /** Sample bytes (payload and failing rule codes, as stored JSON text) one tenant may keep; its oldest samples go past it. */
  readonly samplesMaxBytesPerTenant: number;
  /** Payloads whose JSON text is larger than this many bytes are not sampled (counted as dropped, `too_large`). */
  readonly sampleMaxPayloadBytes: number;
  /** Audit entries older than this many days are deleted by a periodic sweep. */
  readonly auditRetentionDays: number;
  readonly logLevel: LogLevel;
  /** The built console's folder (index.html and assets/); undefined: dist/console of the checkout (src/console/console-routes.ts). */
  readonly consoleDir: string | undefined;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

/** Tenant ids of docs/api.md. */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const BOOTSTRAP_KEY_PATTERN = /^[A-Za-z0-9_-]{22,}$/;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** A whole number within inclusive bounds; no `max` means no upper bound. */
export interface IntegerVariable {
  readonly kind: 'integer';
  readonly name: string;
  readonly default: number;
  readonly min: number;
  readonly max?: number;
  readonly meaning: string;
}

/** true/1/yes or false/0/no, any case. */
export interface BooleanVariable {
  readonly kind: 'boolean';
  readonly name: string;
  readonly default: boolean;
  readonly meaning: string;
}

/** A URL with one of `protocols`; unset when it has no default. */
export interface UrlVariable {
  readonly kind: 'url';
  readonly name: string;
  readonly default: undefined;
  readonly protocols: readonly string[];
  readonly meaning: string;
}

/** One of `choices`. */
export interface ChoiceVariable {
  readonly kind: 'choice';
  readonly name: string;
  readonly default: string;
  readonly choices: readonly string[];
  readonly meaning: string;
}

/** Free text in the form `meaning` gives; unset when it has no default. */
export interface TextVariable {
  readonly kind: 'text';
  readonly name: string;
  readonly default: string | undefined;
  readonly meaning: string;
}

/** One environment variable the service reads: its name, default, bounds and meaning. */
export type ConfigVariable = IntegerVariable | BooleanVariable | UrlVariable | ChoiceVariable | TextVariable;

function integerVariable(name: string, fallback: number, min: number, max: number | undefined, meaning: string): IntegerVariable {
  return { kind: 'integer', name, default: fallback, min, ...(max === undefined ? {} : { max }), meaning };
}

/**
 * The environment variables, by name. loadConfig reads the environment only
 * through these entries, so their defaults and bounds are the ones applied.
 *
 * @example
 * CONFIG_VARIABLE_BY_NAME.RATE_LIMIT_WINDOW_MS.min; // 100
 */
export const CONFIG_VARIABLE_BY_NAME = deepFreeze({
  PORT: integerVariable('PORT', 3000, 0, 65535, 'port the HTTP server listens on'),
  HOST: { kind: 'text', name: 'HOST', default: '127.0.0.1', meaning: 'address the HTTP server listens on' },
  DATABASE_URL: {
    kind: 'url', name: 'DATABASE_URL', default: undefined, protocols: ['postgres:', 'postgresql:'],
    meaning: 'PostgreSQL connection string; unset means the embedded PGlite database in RULES_DATA_DIR',
  },
  RULES_DATA_DIR: { kind: 'text', name: 'RULES_DATA_DIR', default: './data', meaning: 'the embedded PGlite database\'s folder' },
  CONSOLE_DIR: {
    kind: 'text', name: 'CONSOLE_DIR', default: undefined,
    meaning: 'the folder of the built console served at /console; unset means dist/console of the checkout, where npm run build writes it',
  },
  REDIS_URL: {
    kind: 'url', name: 'REDIS_URL', default: undefined, protocols: ['redis:', 'rediss:'],
    meaning: 'Redis for rate-limit counters shared by every instance; unset means counters in each process\'s memory',
  },
  REDIS_KEY_PREFIX: {
    kind: 'text', name: 'REDIS_KEY_PREFIX', default: 'rules:',
    meaning: 'prefix of every Redis key, so several deployments can share one Redis: 1-64 characters of [A-Za-z0-9_.:-]',
  },
  TRUST_PROXY: {
    kind: 'text', name: 'TRUST_PROXY', default: 'false',
    meaning: 'whose X-Forwarded-For gives the client address: false, true (every hop), a hop count, or comma-separated proxy addresses/CIDR ranges',
  },
  RULES_BOOTSTRAP_TENANTS: {
    kind: 'text', name: 'RULES_BOOTSTRAP_TENANTS', default: undefined,
    meaning: 'comma-separated tenant:adminKey pairs made sure of at every start (keys: at least 22 characters of [A-Za-z0-9_-])',
  },
  RATE_LIMIT_MAX: integerVariable('RATE_LIMIT_MAX', 6000, 1, undefined, 'default requests per window of each tenant'),
  RATE_LIMIT_WINDOW_MS: integerVariable('RATE_LIMIT_WINDOW_MS', 60_000, 100, undefined, 'length of the rate-limit window, in milliseconds'),
  MAX_BODY_BYTES: integerVariable('MAX_BODY_BYTES', 1_048_576, 1024, undefined, 'largest request body, in bytes; larger bodies get 413'),
  MAX_BATCH_ITEMS: integerVariable('MAX_BATCH_ITEMS', 1000, 1, undefined, 'most items of one batch validation; more get 400'),
  MAX_TRANSACTION_CONTEXTS: integerVariable('MAX_TRANSACTION_CONTEXTS', 20, 1, undefined, 'most contexts of one transaction validation; more get 400'),
  MAX_PAYLOAD_DEPTH: integerVariable('MAX_PAYLOAD_DEPTH', 64, 1, 1000, 'deepest payload nesting (the payload object is level 1); deeper gets 400'),
  MAX_EXPRESSION_LENGTH: integerVariable('MAX_EXPRESSION_LENGTH', 4096, 16, 1_000_000, 'longest rule expression or condition, in characters; longer gets 400'),
  MAX_RULES_PER_CONTEXT: integerVariable('MAX_RULES_PER_CONTEXT', 5000, 1, undefined, 'most non-archived rules in one context; more get 409 LIMIT_EXCEEDED'),
  MAX_ANSWER_BYTES: integerVariable(
    'MAX_ANSWER_BYTES', 16_777_216, 65_536, 268_435_456,
    'largest validation answer, estimated from its failures before it is built, in bytes; larger answers get 400',
  ),
  VALIDATOR_CACHE_SIZE: integerVariable('VALIDATOR_CACHE_SIZE', 1000, 1, undefined, 'compiled validators kept per process; least recently used beyond it are dropped'),
  VALIDATOR_CACHE_MB: integerVariable(
    'VALIDATOR_CACHE_MB', 1024, 1, 1_048_576,
    'estimated heap the cached validators may hold together, in MiB; least recently used beyond it are dropped',
  ),
  WORKERS: integerVariable('WORKERS', 1, 1, 64, 'processes sharing the port; more than 1 needs DATABASE_URL'),
  POOL_THREADS: integerVariable(
    'POOL_THREADS', 0, 0, 64,
    'worker threads that run heavy management work (compiles for one request, stored-test runs, impact replays, explain traces, import checks, diffs); 0 means one less than the cores, at least 1',
  ),
  COMPILE_THREADS: integerVariable(
    'COMPILE_THREADS', 1, 1, 64,
    'worker threads that compile live validators (cache misses, the warm start, publishes, rollbacks, imports, recompiles), apart from those of POOL_THREADS',
  ),
  POOL_WORKER_MEMORY_MB: integerVariable(
    'POOL_WORKER_MEMORY_MB', 512, 64, 16_384,
    'heap each of those threads may grow to, in MiB; an operation that needs more is refused with 409',
  ),
  OPERATIONS_PER_TENANT: integerVariable(
    'OPERATIONS_PER_TENANT', 4, 1, 100,
    'heavy management operations one tenant may have waiting or running in each process; more get 429 with Retry-After',
  ),
  OPERATION_TIME_BUDGET_MS: integerVariable(
    'OPERATION_TIME_BUDGET_MS', 10_000, 100, 600_000,
    'wall time one heavy management operation may take, in milliseconds; past it the operation is stopped, changes nothing and gets 409',
  ),
  OPERATION_ANSWER_MAX_BYTES: integerVariable(
    'OPERATION_ANSWER_MAX_BYTES', 4_194_304, 65_536, 268_435_456,
    'bytes of results one stored-test run may answer; the results past them are left out and the answer says `truncated: true`',
  ),
  WARM_START_MS: integerVariable(
    'WARM_START_MS', 15_000, 0, 600_000,
    'longest time a starting process spends compiling the validators most likely to be asked for before it listens, in milliseconds; 0 starts cold',
  ),
  REQUEST_TIMEOUT_MS: integerVariable(
    'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000,
    'a request not fully arrived this long after it began is refused and its connection closed, in milliseconds',
  ),
  SHUTDOWN_DRAIN_MS: integerVariable(
    'SHUTDOWN_DRAIN_MS', 0, 0, undefined,
    'after SIGTERM, how long the listener keeps accepting (readiness 503, answers with Connection: close), in milliseconds',
  ),
  SHUTDOWN_TIMEOUT_MS: integerVariable('SHUTDOWN_TIMEOUT_MS', 10_000, 0, undefined, 'time after the drain period before a hard stop, in milliseconds'),
  MAX_EVENT_LOOP_DELAY_MS: integerVariable(
    'MAX_EVENT_LOOP_DELAY_MS', 200, 0, 60_000,
    'event-loop delay (p99 of a half second) which, exceeded two half seconds in a row, makes a process refuse management requests '
      + 'with 503 and report not ready until it catches up, in milliseconds; 0 never sheds',
  ),
  METRICS_TENANT_LABELS: {
    kind: 'boolean', name: 'METRICS_TENANT_LABELS', default: false, meaning: 'add tenant and context labels to metrics',
  },
  SAMPLES_MAX_BYTES_PER_TENANT: integerVariable(
    'SAMPLES_MAX_BYTES_PER_TENANT', 67_108_864, 65_536, undefined,
    'sample bytes (payload and failing rule codes as stored JSON text) one tenant keeps across all its contexts; past it its oldest samples are deleted',
  ),
  SAMPLE_MAX_PAYLOAD_BYTES: integerVariable(
    'SAMPLE_MAX_PAYLOAD_BYTES', 65_536, 2, 16_777_216,
    'largest payload (its JSON text, in bytes) that sampling records; larger ones are validated as usual but not sampled',
  ),
  AUDIT_RETENTION_DAYS: integerVariable(
    'AUDIT_RETENTION_DAYS', 365, 1, 36_500, 'age in days past which audit entries are deleted by a periodic sweep',
  ),
  LOG_LEVEL: { kind: 'choice', name: 'LOG_LEVEL', default: 'info', choices: LOG_LEVELS, meaning: 'pino log level' },
} as const satisfies Record<string, ConfigVariable>);

function deepFreeze<T extends Record<string, ConfigVariable>>(variables: T): Readonly<T> {
  for (const variable of Object.values(variables)) Object.freeze(variable);
  return Object.freeze(variables);
}

/**
 * Every environment variable the service reads, with its default, bounds
 * and meaning, in the order of the Config they fill.
 *
 * @example
 * for (const variable of CONFIG_VARIABLES) console.log(variable.name, variable.default);
 */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = Object.freeze(Object.values(CONFIG_VARIABLE_BY_NAME));

type Env = Record<string, string | undefined>;

/** Reads and validates the configuration. Throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const read = (variable: ConfigVariable): string | undefined => {
    const value = env[variable.name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const integer = (variable: IntegerVariable): number => {
    const { name, min, max = Number.MAX_SAFE_INTEGER } = variable;
    const raw = read(variable);
    if (raw === undefined) return variable.default;
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  };

  const boolean = (variable: BooleanVariable): boolean => {
    const raw = read(variable);
    if (raw === undefined) return variable.default;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    throw new ConfigError(variable.name, `must be true or false, got "${raw}"`);
  };

  const url = (variable: UrlVariable): string | undefined => {
    const { name, protocols } = variable;
    const raw = read(variable);
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

  const text = <D extends string | undefined>(variable: TextVariable & { default: D }): string | D => read(variable) ?? variable.default;

  const choice = (variable: ChoiceVariable): string => {
    const value = read(variable) ?? variable.default;
    if (!variable.choices.includes(value)) throw new ConfigError(variable.name, `must be one of ${variable.choices.join(', ')}`);
    return value;
  };

  const vars = CONFIG_VARIABLE_BY_NAME;
  const logLevel = choice(vars.LOG_LEVEL) as LogLevel;
  const databaseUrl = url(vars.DATABASE_URL);
  const workers = integer(vars.WORKERS);
  if (workers > 1 && databaseUrl === undefined) {
    throw new ConfigError(vars.WORKERS.name, 'above 1 needs DATABASE_URL (the embedded database belongs to one process)');
  }

  return Object.freeze({
    port: integer(vars.PORT),
    host: text(vars.HOST),
    databaseUrl,
    dataDir: text(vars.RULES_DATA_DIR),
    redisUrl: url(vars.REDIS_URL),
    redisKeyPrefix: redisKeyPrefix(text(vars.REDIS_KEY_PREFIX)),
    trustProxy: parseTrustProxy(text(vars.TRUST_PROXY)),
    bootstrapTenants: parseBootstrapTenants(text(vars.RULES_BOOTSTRAP_TENANTS)),
    rateLimitMax: integer(vars.RATE_LIMIT_MAX),
    rateLimitWindowMs: integer(vars.RATE_LIMIT_WINDOW_MS),
    maxBodyBytes: integer(vars.MAX_BODY_BYTES),
    maxBatchItems: integer(vars.MAX_BATCH_ITEMS),
    maxTransactionContexts: integer(vars.MAX_TRANSACTION_CONTEXTS),
    maxPayloadDepth: integer(vars.MAX_PAYLOAD_DEPTH),
    maxExpressionLength: integer(vars.MAX_EXPRESSION_LENGTH),
    maxRulesPerContext: integer(vars.MAX_RULES_PER_CONTEXT),
    maxAnswerBytes: integer(vars.MAX_ANSWER_BYTES),
    validatorCacheSize: integer(vars.VALIDATOR_CACHE_SIZE),
    validatorCacheMb: integer(vars.VALIDATOR_CACHE_MB),
    workers,
    poolThreads: integer(vars.POOL_THREADS),
    poolWorkerMemoryMb: integer(vars.POOL_WORKER_MEMORY_MB),
    compileThreads: integer(vars.COMPILE_THREADS),
    operationsPerTenant: integer(vars.OPERATIONS_PER_TENANT),
    operationTimeBudgetMs: integer(vars.OPERATION_TIME_BUDGET_MS),
    operationAnswerMaxBytes: integer(vars.OPERATION_ANSWER_MAX_BYTES),
    warmStartMs: integer(vars.WARM_START_MS),
    requestTimeoutMs: integer(vars.REQUEST_TIMEOUT_MS),
    shutdownDrainMs: integer(vars.SHUTDOWN_DRAIN_MS),
    shutdownTimeoutMs: integer(vars.SHUTDOWN_TIMEOUT_MS),
    maxEventLoopDelayMs: integer(vars.MAX_EVENT_LOOP_DELAY_MS),
    metricsTenantLabels: boolean(vars.METRICS_TENANT_LABELS),
    samplesMaxBytesPerTenant: integer(vars.SAMPLES_MAX_BYTES_PER_TENANT),
    sampleMaxPayloadBytes: integer(vars.SAMPLE_MAX_PAYLOAD_BYTES),
    auditRetentionDays: integer(vars.AUDIT_RETENTION_DAYS),
    logLevel,
    consoleDir: text(vars.CONSOLE_DIR),
  });
}

const REDIS_KEY_PREFIX_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

function redisKeyPrefix(raw: string): string {
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
function parseTrustProxy(raw: string): boolean | number | string[] {
  if (/^(false|0|no)$/i.test(raw)) return false;
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
