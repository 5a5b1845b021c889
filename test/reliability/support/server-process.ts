/**
 * The real server, as `npm start` runs it (`node --enable-source-maps
 * dist/server.js`), as a child process, for tests that kill it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './measure.ts';
import { serviceArgs } from '../../support/service-bundle.ts';
import { TEST_SERVICE_ENV } from '../../support/test-service-env.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly baseUrl: string;
  output(): string;
  /** Resolves with the exit code, or the signal's name. */
  readonly exited: Promise<number | string | null>;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * Starts the server with exactly the service variables given in `env`
 * (inherited ones are dropped) and resolves once /health/live answers.
 */
export async function startServerProcess(env: Record<string, string>, port?: number): Promise<ServerProcess> {
  const listenOn = port ?? (await freePort());
  const inherited = { ...process.env };
  for (const name of Object.keys(inherited)) {
    if (/^(RULES_|DATABASE_URL|LOG_LEVEL|WORKERS|MAX_|RATE_LIMIT_|REDIS_URL|VALIDATOR_CACHE_|METRICS_)/.test(name)) delete inherited[name];
  }
  const child = spawn(process.execPath, serviceArgs(), {
    cwd: ROOT,
    env: { ...inherited, PORT: String(listenOn), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...TEST_SERVICE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string | null>((done) => child.on('exit', (code, signal) => done(code ?? signal)));
  let gone = false;
  void exited.then(() => (gone = true));
  const baseUrl = `http://127.0.0.1:${listenOn}`;
  const started = Date.now();
  for (;;) {
    if (gone) throw new Error(`server exited before listening:\n${output}`);
    if (Date.now() - started > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`server did not listen within 60 s:\n${output}`);
    }
    try {
      if ((await fetch(`${baseUrl}/health/live`)).ok) break;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  return { child, port: listenOn, baseUrl, output: () => output, exited };
}
