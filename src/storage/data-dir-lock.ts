/**
 * One process at a time in an embedded (PGlite) data folder. PGlite runs
 * PostgreSQL inside the process that opened it and keeps pages in memory,
 * so a second process on the same folder (say, the CLI while the server
 * runs) reads stale data, and whichever writes last can corrupt the folder.
 *
 * The holder writes `rules-service.lock` (pid, host, start time) with an
 * exclusive create. A lock whose process is gone (crash, SIGKILL) is stale
 * and taken over; one held by a live process of this host is refused with
 * DataDirLockedError. Opens within one process share the lock (counted).
 */
import { open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { TUNING } from '../tuning.ts';

/** File name of the lock inside the data folder. */
export const LOCK_FILE = 'rules-service.lock';

/** The data folder is held by another live process. */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(readonly dataDir: string, readonly pid: number, readonly host: string) {
    super(
      `the embedded database in ${dataDir} is in use by process ${pid} on ${host} (a running server?). ` +
        'PGlite belongs to one process: stop that process first, or use DATABASE_URL (PostgreSQL). ' +
        `If no such process runs, delete ${join(dataDir, LOCK_FILE)}.`,
    );
    this.name = 'DataDirLockedError';
  }
}

interface LockContent {
  pid: number;
  host: string;
  startedAt: string;
}

const heldHere = new Map<string, number>();

const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * Takes the data folder's lock; resolves to its release function (call it
 * after closing the database; calling it twice is harmless).
 *
 * @example
 * const release = await lockDataDir('./data');
 * try { ... } finally { await release(); }
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const dir = resolve(dataDir);
  const path = join(dir, LOCK_FILE);
  const count = heldHere.get(dir) ?? 0;
  if (count === 0) await acquire(dir, path);
  heldHere.set(dir, count + 1);
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    const left = (heldHere.get(dir) ?? 1) - 1;
    if (left > 0) {
      heldHere.set(dir, left);
      return;
    }
    heldHere.delete(dir);
    await rm(path, { force: true });
  };
}

async function acquire(dir: string, path: string): Promise<void> {
  const content: LockContent = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  // Two attempts: the second follows the removal of a stale lock.
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx');
      try {
        await handle.writeFile(`${JSON.stringify(content)}\n`);
      } finally {
        await handle.close();
      }
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // A lock just created by another process may not be written yet.
    const holder = (await readHolder(path)) ?? (await delay(TUNING.dataDirHalfWrittenGraceMs.value).then(() => readHolder(path)));
    if (holder !== undefined && isAlive(holder)) throw new DataDirLockedError(dir, holder.pid, holder.host);
    await rm(path, { force: true });
  }
  const holder = await readHolder(path);
  throw new DataDirLockedError(dir, holder?.pid ?? 0, holder?.host ?? 'unknown host');
}

async function readHolder(path: string): Promise<LockContent | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<LockContent>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return undefined;
    return { pid: parsed.pid, host: parsed.host, startedAt: String(parsed.startedAt) };
  } catch {
    // Unreadable or half-written: treated as stale, as a crash mid-write leaves it.
    return undefined;
  }
}

/** A holder on another host cannot be checked, so it counts as alive. */
function isAlive(holder: LockContent): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
