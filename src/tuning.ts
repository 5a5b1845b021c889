/**
 * The service's fixed tunables: every timeout, interval, bound, batch size,
 * cache weight and retry delay that is not read from the environment (those
 * are config.ts's CONFIG_VARIABLES), each with its value, its unit, the
 * bounds it must stay within where something depends on it, and why it has
 * this value. Modules take their values from here, so changing one is an
 * edit of this file alone; test/tuning.test.ts checks every entry.
 *
 * The compiler keeps its own limits (compiler/limits.ts): it imports
 * nothing from the service.
 */

/** One fixed tunable. */
export interface Tunable {
  readonly value: number;
  /** `ms`, `s`, `bytes`, or what is counted (`keys`, `rows`, `rounds`...). */
  readonly unit: string;
  /** Inclusive bounds, where another part of the service relies on them. */
  readonly min?: number;
  readonly max?: number;
  /** Why this value, in one line. */
  readonly why: string;
}

function tunables<T extends Record<string, Tunable>>(entries: T): Readonly<T> {
  for (const entry of Object.values(entries)) Object.freeze(entry);
  return Object.freeze(entries);
}

/**
 * Every fixed tunable, by name.
 *
 * @example
 * setTimeout(check, TUNING.reconcileIntervalMs.value);
 */
export const TUNING = tunables({
  // Rule evaluation and compiles.
  evaluationDeadlineMs: {
    value: 1000, unit: 'ms', min: 1,
    why: 'longest time one request may spend evaluating rules; past it the request is refused, not the event loop held',
  },
  nicedDeadlineWallFactor: {
    value: 5, unit: 'times', min: 1,
    why: 'on a niced management thread the evaluation deadline counts the thread\'s CPU time; its watchdog stops an evaluation at this many times the deadline in wall time, so a thread starved by busy cores refuses only past it, and a runaway evaluation on idle cores runs at most this many deadlines (within its operation\'s budget)',
  },
  unguardedCostLimit: {
    value: 2_000_000, unit: 'steps', min: 0,
    why: 'requests estimated below this are evaluated without the deadline\'s watchdog thread: a few milliseconds of work at most',
  },
  compileSliceMs: {
    value: 10, unit: 'ms', min: 1,
    why: 'longest run of compile work between two turns of the event loop, so requests wait at most about one slice behind a compile',
  },
  installSliceMs: {
    value: 2, unit: 'ms', min: 1,
    why: 'longest run of an install\'s work (rebuilding refs, reading a ruleset\'s rows) between two turns of the event loop; each part of a large validator gets a turn of its own whatever this is',
  },
  maxExpectedValueDepth: {
    value: 32, unit: 'levels', min: 1,
    why: 'deeper expected values could not be serialized back without risk; schemas have the same bound',
  },

  // The compiled-validator cache.
  unknownContextTtlMs: {
    value: 500, unit: 'ms', min: 0, max: 1000,
    why: 'a context without a ruleset is answered from memory this long; at most the 1 s in which instances converge',
  },
  impactDefaultSamples: {
    value: 10_000, unit: 'samples', min: 1,
    why: 'an impact report replays this many of the newest samples when its body names no limit: enough to see rare cases, quick to replay',
  },
  impactMaxSamples: {
    value: 100_000, unit: 'samples', min: 1,
    why: 'the most samples one impact report replays, which is also the most a context keeps',
  },
  impactSamplesPerRead: {
    value: 1000, unit: 'samples', min: 1,
    why: 'an impact report reads its samples a page at a time, replaying one page while the next is read, so it never holds them all',
  },
  impactBytesPerRead: {
    value: 4_194_304, unit: 'bytes', min: 65_536,
    why: 'an impact report\'s page of samples holds at most this many bytes of stored JSON (one sample more when a single one is larger), so large payloads cannot fill memory: two pages are held at once',
  },
  impactReplayBudgetMs: {
    value: 10_000, unit: 'ms', min: 1,
    why: 'evaluation time the CLI\'s impact report may spend replaying samples (the service\'s is OPERATION_TIME_BUDGET_MS)',
  },
  operationBusyRetryAfterSeconds: {
    value: 1, unit: 's', min: 1,
    why: 'Retry-After of a heavy operation refused while the tenant has its most in flight: most take well under a second',
  },
  workerThreadNice: {
    value: 19, unit: 'nice', min: 0, max: 19,
    why: 'management threads lower their own scheduling priority to the lowest (Linux keeps a nice value per thread), so that when the cores are busy the operating system runs the event loop that answers validations first and the heavy work in what is left; so do the compile lane\'s threads for lifecycle operations (publish, rollback, import), while its threads for validations\' compiles keep the default, since validations of a cold context wait for them',
  },
  poolIdleTimeoutMs: {
    value: 30_000, unit: 'ms', min: 0,
    why: 'a management thread idle this long ends, so an instance that is not being managed holds no thread nor its heap',
  },
  warmThreads: {
    value: 1, unit: 'threads', min: 0,
    why: 'threads of the management pool and of each priority of the compile lane kept once started, not ended when idle: a thread\'s start holds the event loop about 10 ms, which other tenants\' validations would wait behind at every burst of management work after a pause; each kept thread costs 35-50 MB of resident memory',
  },
  maxStoredTests: {
    value: 1000, unit: 'tests', min: 1,
    why: 'a context\'s stored tests run before every publish, so their number is bounded as its rules are',
  },
  maxUnknownContexts: {
    value: 10_000, unit: 'contexts', min: 1,
    why: 'unknown context names are whatever callers send, so their memory is bounded',
  },
  validatorBaseBytes: {
    value: 4096, unit: 'bytes', min: 0,
    why: 'heap a cached validator holds whatever its size, in the estimate the cache\'s byte bound counts',
  },
  validatorBytesPerTextCharacter: {
    value: 20, unit: 'bytes per character', min: 1,
    why: 'heap per character of rule text (the rules, their IR, generated code and compiled functions), estimated on the high side',
  },
  validatorBytesPerPatternWeight: {
    value: 200, unit: 'bytes per unit of regex weight', min: 1,
    why: 'heap per unit of regex weight on the linear-time engine, estimated on the high side',
  },

  // Validation requests.
  consistentSetAttempts: {
    value: 10, unit: 'rounds', min: 1,
    why: 'rounds of "take, compare with the database, reload what was stale" before a transaction is answered 503',
  },
  republishedRetryAfterSeconds: {
    value: 1, unit: 's', min: 1,
    why: 'Retry-After of that 503: the next round usually matches once a burst of publishes ends',
  },
  defaultPageSize: {
    value: 50, unit: 'rules', min: 1,
    why: 'rules per page of GET /rules when `limit` is not given; at most the largest page (checked by its test)',
  },
  maxPageSize: {
    value: 500, unit: 'rules', min: 1,
    why: 'the largest `limit` GET /rules accepts, so one page stays one bounded query and answer',
  },

  // Authentication.
  keyCacheMaxKeys: {
    value: 10_000, unit: 'keys', min: 1,
    why: 'known keys kept in memory, so authentication of a key seen before needs no query',
  },
  keyCacheMaxUnknown: {
    value: 10_000, unit: 'keys', min: 1,
    why: 'unknown keys remembered, so a flood of bad keys costs one query each per TTL, within a bound',
  },
  keyCacheUnknownTtlMs: {
    value: 5_000, unit: 'ms', min: 0,
    why: 'how long an unknown key is answered from memory, so a client hammering one bad key costs one query per this time',
  },
  lastUsedFlushMs: {
    value: 30_000, unit: 'ms', min: 1,
    why: 'interval between background writes of keys\' lastUsedAt; the field is coarse, and authentication never waits on it',
  },

  // Warm start: which contexts were used.
  contextUsageFlushMs: {
    value: 10_000, unit: 'ms', min: 1,
    why: 'interval between background writes of the contexts used, so a use reaches the next process\'s warm start at most this late',
  },
  contextUsageWriteChunk: {
    value: 1000, unit: 'contexts', min: 1,
    why: 'contexts written per statement of that background write, so one statement stays small',
  },

  // Save-time warnings.
  payloadSchemaCacheEntries: {
    value: 256, unit: 'schemas', min: 1,
    why: 'parsed payload schemas a process keeps (each at most 64 KiB of JSON plus its remembered lookups), so a rule check rereads only a revision',
  },
  payloadSchemaRecheckMs: {
    value: 1000, unit: 'ms', min: 0, max: 1000,
    why: 'a cached payload schema (or its absence) is used this long before its revision is read again; at most the 1 s in which instances converge',
  },

  // Rate limiting.
  rateLimitReadyTimeoutMs: {
    value: 1_000, unit: 'ms', min: 0,
    why: 'how long the start waits for Redis before starting without it; budgets are counted once it connects',
  },
  policyTtlMs: {
    value: 5_000, unit: 'ms', min: 0,
    why: 'how long a tenant\'s budget override is trusted before one background read refreshes it',
  },
  maxPolicyTenants: {
    value: 100_000, unit: 'tenants', min: 1,
    why: 'tenants whose budget policy is kept in memory',
  },
  memoryStoreSweepMs: {
    value: 30_000, unit: 'ms', min: 1,
    why: 'interval between sweeps of expired windows from the in-memory budget store',
  },
  redisCommandTimeoutMs: {
    value: 250, unit: 'ms', min: 1,
    why: 'a hit waits at most this long for Redis, in time the event loop was free to read its answer, before it is counted in this process instead',
  },
  redisProbeIntervalMs: {
    value: 500, unit: 'ms', min: 1,
    why: 'while counting in this process over an open connection, Redis is asked this often whether it answers in time again',
  },
  redisRecoveryProbes: {
    value: 3, unit: 'probes', min: 1,
    why: 'after a fallback, counting is shared in Redis again only once this many probes in a row (redisProbeIntervalMs apart) were answered in time, so a flapping Redis does not flip counting back and forth',
  },
  redisStalledReconnectMs: {
    value: 5_000, unit: 'ms', min: 1,
    why: 'a probe unanswered this long means a dead connection (a peer gone without a reset): it is dropped and made anew',
  },
  redisConnectTimeoutMs: {
    value: 2_000, unit: 'ms', min: 1,
    why: 'one connection attempt to Redis; reconnects follow, and requests never wait for them',
  },
  redisReconnectStepMs: {
    value: 100, unit: 'ms', min: 1,
    why: 'reconnect attempts to Redis back off by this much per attempt',
  },
  redisMaxReconnectDelayMs: {
    value: 1_000, unit: 'ms', min: 1,
    why: 'reconnect attempts back off up to this delay, and never stop, so budgets are counted again soon after Redis returns',
  },

  // Storage.
  databaseConnectTimeoutMs: {
    value: 2000, unit: 'ms', min: 1, max: 5000,
    why: 'fail fast while the server is down: a request gets its 503 within 5 s',
  },
  databaseQueryTimeoutMs: {
    value: 2000, unit: 'ms', min: 1, max: 2500,
    why: 'a server that stops answering must not hold a query forever; a transaction waits twice (statement, ROLLBACK), still within 5 s',
  },
  databasePoolSize: {
    value: 10, unit: 'connections', min: 1,
    why: 'connections per process to PostgreSQL; the hot path touches the database only on a cache miss',
  },
  migrationLockConnectTimeoutMs: {
    value: 2000, unit: 'ms', min: 1,
    why: 'the connection that holds the migration lock fails fast, like every other connection',
  },
  readinessPingTimeoutMs: {
    value: 1500, unit: 'ms', min: 1, max: 5000,
    why: '/health/ready answers not ready when the database does not answer within this, well before a probe gives up',
  },
  activeKeyCheckChunk: {
    value: 1000, unit: 'keys', min: 1,
    why: 'keys checked per query by the consistency safety net, so one statement stays small',
  },
  dataDirHalfWrittenGraceMs: {
    value: 200, unit: 'ms', min: 0,
    why: 'a lock file another process is writing is read again after this before it is judged',
  },

  // Sampled traffic (docs/operations.md, "Sampling").
  samplingDefaultMaxSamples: {
    value: 10_000, unit: 'samples', min: 1, max: 100_000,
    why: 'samples kept per context when PUT /tenant/sampling names no maxSamples: what one impact report reads by default',
  },
  samplingDefaultRetentionHours: {
    value: 168, unit: 'hours', min: 1, max: 720,
    why: 'age past which samples go when PUT /tenant/sampling names no retentionHours: a week of traffic',
  },
  samplingQueueMax: {
    value: 10_000, unit: 'samples', min: 1,
    why: 'samples waiting in memory for the background writer; past it new ones are dropped and counted, so a slow database never grows the heap',
  },
  samplingQueueMaxSize: {
    value: 2_000_000, unit: 'payload size units', min: 1,
    why: 'total cost-model size (values plus characters / 16) of the queued payloads: about 64 MB of heap, so large payloads cannot fill memory before the count bound is reached',
  },
  samplingFlushMs: {
    value: 1000, unit: 'ms', min: 1, max: 1000,
    why: 'interval between background writes of queued samples: a sample is readable within about a second, and each write\'s fixed cost is paid once a second',
  },
  samplingPruneMs: {
    value: 60_000, unit: 'ms', min: 1,
    why: 'interval between sweeps that drop samples past a context\'s maxSamples or its tenant\'s retention',
  },

  // The audit trail (docs/api.md, "Audit trail"; docs/operations.md, "Audit retention").
  auditMaxValueBytes: {
    value: 16_384, unit: 'bytes', min: 256,
    why: 'an audit entry keeps a before or after value whose JSON text is at most this long; a larger one is kept as its size and sha256, so one entry stays small whatever the change',
  },
  auditRetentionSweepMs: {
    value: 3_600_000, unit: 'ms', min: 1,
    why: 'interval between sweeps that delete audit entries older than AUDIT_RETENTION_DAYS (one also runs at start): retention is in days, an hour late is nothing',
  },
  auditRetentionBatch: {
    value: 5000, unit: 'rows', min: 1,
    why: 'audit entries one statement of the retention sweep deletes, so a first sweep over years of entries never holds one long transaction',
  },

  // Cache sync across processes.
  reconcileIntervalMs: {
    value: 3000, unit: 'ms', min: 1,
    why: 'how often the safety net compares caches with the database, so a lost notice leaves a cache stale for about this long',
  },
  firstListenWaitMs: {
    value: 3000, unit: 'ms', min: 0,
    why: 'how long the first connection of the change listener may delay the start',
  },
  versionCheckChunk: {
    value: 1000, unit: 'contexts', min: 1,
    why: 'contexts compared per query by the safety net, so one statement stays small',
  },
  maxFollowRounds: {
    value: 3, unit: 'rounds', min: 1,
    why: 'reloads of a context overtaken by newer publishes before it is dropped, so the next request loads it',
  },
  listenerConnectTimeoutMs: {
    value: 2000, unit: 'ms', min: 1,
    why: 'one connection attempt of the change listener; it retries with backoff',
  },
  listenerPingTimeoutMs: {
    value: 2000, unit: 'ms', min: 1,
    why: 'a listener connection that does not answer a ping within this is taken as dead and reopened',
  },
  listenerMinBackoffMs: {
    value: 250, unit: 'ms', min: 1,
    why: 'first delay before the change listener reconnects; it doubles (with jitter) up to the maximum',
  },
  listenerMaxBackoffMs: {
    value: 5000, unit: 'ms', min: 1,
    why: 'longest delay between reconnects of the change listener; the safety net catches up after each one',
  },

  // Worker processes (WORKERS > 1).
  siblingWaitMs: {
    value: 1000, unit: 'ms', min: 1,
    why: 'how long a change waits for the sibling workers to apply it before the call returns anyway',
  },
  workerSiblingMarginMs: {
    value: 500, unit: 'ms', min: 0,
    why: 'a worker waits this much longer than the primary does, in case the primary is gone',
  },
  metricsCollectWaitMs: {
    value: 6000, unit: 'ms', min: 5001,
    why: 'a worker waits this long for the primary\'s metrics: over prom-client\'s own 5 s bound for the workers\' answers',
  },
  metricsRetryAfterSeconds: {
    value: 5, unit: 's', min: 1,
    why: 'Retry-After of a scrape whose workers\' metrics could not be collected',
  },
  healthyWorkerLifetimeMs: {
    value: 10_000, unit: 'ms', min: 1,
    why: 'a worker that lived at least this long had a real life: restart it at once',
  },
  workerRestartBaseDelayMs: {
    value: 1000, unit: 'ms', min: 1,
    why: 'restarts of workers that keep dying young back off from this, doubling',
  },
  maxWorkerRestartDelayMs: {
    value: 30_000, unit: 'ms', min: 1,
    why: 'restarts of workers that keep dying young back off up to this',
  },
  workerShutdownGraceMs: {
    value: 2000, unit: 'ms', min: 0,
    why: 'extra time over SHUTDOWN_TIMEOUT_MS before the primary kills the workers still running',
  },

  // HTTP.
  // Local evaluation's change feed (src/local-evaluation/validator-events.ts).
  sseMaxBufferedBytes: {
    value: 65_536, unit: 'bytes', min: 1024,
    why: 'a change-feed subscriber whose socket holds this much unsent is not reading: it is dropped rather than buffered for',
  },
  sseCloseGraceMs: {
    value: 500, unit: 'ms', min: 0,
    why: 'at close, a change feed\'s last bytes get this long to leave before its socket is destroyed: the close never waits on a client',
  },
  sseBusyRetryAfterSeconds: {
    value: 5, unit: 's', min: 1,
    why: 'Retry-After of a change feed refused at SSE_MAX_CONNECTIONS: held feeds end only when clients go, seconds at best',
  },
  sseRetryMs: {
    value: 1000, unit: 'ms', min: 100,
    why: 'the reconnection delay a change feed tells EventSource clients (its `retry:` field): back within about a second of a drop',
  },
  corsMaxOrigins: {
    value: 50, unit: 'origins', min: 1,
    why: 'browser origins one tenant may allow: a few sites and their staging and local copies',
  },
  samplesPerBatch: {
    value: 100, unit: 'samples', min: 1,
    why: 'most samples one POST /contexts/{c}/samples may send: a batch of a few seconds of a busy client, bounded in memory',
  },
  idleGraceMs: {
    value: 1000, unit: 'ms', min: 0,
    why: 'connections idle at shutdown stay open this long for requests already on their way',
  },
  acceptQueueQuietMs: {
    value: 50, unit: 'ms', min: 1,
    why: 'at shutdown the listener closes once no connection came for this long: longer than a cluster hand-over of one',
  },
  acceptQueueQuickTurnMs: {
    value: 10, unit: 'ms', min: 1,
    why: 'a loop turn this short, poll included, saw the accept queue as it is: too short for clients to fill it meanwhile',
  },
  acceptQueueCheckMs: {
    value: 10, unit: 'ms', min: 1,
    why: 'how often shutdown looks whether the accept queue is empty; each look is one loop turn',
  },
  unavailableRetryAfterSeconds: {
    value: 5, unit: 's', min: 1, max: 10,
    why: 'Retry-After of a 503 for an unreachable database: it is expected back within 10 s',
  },
  eventLoopResolutionMs: {
    value: 10, unit: 'ms', min: 1, max: 50,
    why: 'period of the timer that measures event-loop delay (Node\'s default): a reading costs one timer tick, and an idle loop reads about this',
  },
  overloadSampleMs: {
    value: 500, unit: 'ms', min: 50, max: 5000,
    why: 'the overload monitor reads its window of event-loop delay this often: about 50 ticks of the delay timer a window',
  },
  overloadWindows: {
    value: 2, unit: 'windows', min: 1,
    why: 'windows in a row over the limit before a process sheds: a lag that lasts or recurs for a second, not one lone stall',
  },
  overloadRetryAfterSeconds: {
    value: 5, unit: 's', min: 1, max: 60,
    why: 'Retry-After of a management request refused while the process is overloaded: long enough for the heavy work behind the lag to end',
  },
  maxPathSegmentLength: {
    value: 16 * 1024, unit: 'characters', min: 100,
    why: 'longer than any request line Node accepts (its header size limit), so the router never refuses a segment first',
  },
  minConnectionsCheckMs: {
    value: 50, unit: 'ms', min: 1,
    why: 'Node looks for requests past their timeout at a quarter of REQUEST_TIMEOUT_MS, never more often than this',
  },
  maxConnectionsCheckMs: {
    value: 30_000, unit: 'ms', min: 1,
    why: 'and never less often than Node\'s own default',
  },
});

export type TunableName = keyof typeof TUNING;
