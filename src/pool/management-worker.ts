/**
 * The entry of a management thread (management-pool.ts): piscina calls its
 * default export with each task. In the bundle it is an entry of its own,
 * dist/management-worker.js beside dist/server.js (src/build/bundle-service.ts);
 * run from the sources, the thread loads tsx first. It imports the compiler
 * and the pure modules the tasks need, never storage: the main thread reads
 * the database and sends plain data.
 */
import { runTask } from './worker-tasks.ts';

export default runTask;
