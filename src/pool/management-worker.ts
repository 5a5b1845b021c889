/**
 * The entry of a management thread (management-pool.ts): piscina calls its
 * default export with each task. In the bundle it is an entry of its own,
 * dist/management-worker.js beside dist/server.js (src/build/bundle-service.ts);
 * run from the sources, the thread loads tsx first. It imports the compiler
 * and the pure modules the tasks need, never storage: the main thread reads
 * the database and sends plain data.
 *
 * The compile lane's threads run this entry too. A thread first lowers its
 * scheduling priority as its pool says (`ThreadStart`, thread-priority.ts):
 * the management pool's and the compile lane's for lifecycle compiles give
 * way to the event loop, the compile lane's for validations not; a niced
 * thread's evaluation deadlines count its CPU time (evaluation-deadline.ts).
 */
import { workerData } from 'node:worker_threads';
import type { ThreadStart } from './pool-threads.ts';
import { lowerThreadPriority } from './thread-priority.ts';
import { runTask } from './worker-tasks.ts';
import { setDeadlineClock } from '../validators/evaluation-deadline.ts';

const start = workerData as ThreadStart | undefined;
if (start !== undefined && start.nice > 0) {
  lowerThreadPriority(start.nice);
  // Niced, this thread's wall time stretches with the load of the cores: evaluation deadlines count its CPU time.
  setDeadlineClock('thread-cpu');
}

export default runTask;
