/**
 * The entry of a management thread (management-pool.ts): piscina calls its
 * default export with each task. In the bundle it is an entry of its own,
 * dist/management-worker.js beside dist/server.js (src/build/bundle-service.ts);
 * run from the sources, the thread loads tsx first. It imports the compiler
 * and the pure modules the tasks need, never storage: the main thread reads
 * the database and sends plain data.
 *
 * The compile lane's threads run this entry too. Every such thread first
 * gives way to the event loop (thread-priority.ts).
 */
import { TUNING } from '../tuning.ts';
import { lowerThreadPriority } from './thread-priority.ts';
import { runTask } from './worker-tasks.ts';

lowerThreadPriority(TUNING.workerThreadNice.value);

export default runTask;
