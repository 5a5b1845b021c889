/**
 * Management threads give way to the event loop that answers validations
 * (the compile lane's do not: validations of a cold context wait for
 * them). Their work is measured in seconds and bounded by budgets; a
 * validation's in a millisecond. When the cores are busy (two management
 * threads and the event loop on a 2-core machine), the operating system
 * would share them evenly and a validation would wait its turn behind a
 * stored-test run. A thread's nice value is its own on Linux (NPTL keeps it
 * per thread, and `os.setPriority()` with no process id sets the calling
 * thread's), so each such thread lowers its own priority at start and the
 * event loop, at the default priority, is run first.
 *
 * Raising one's own nice value needs no privilege. Where it fails (a
 * platform without per-thread priority, a sandbox that forbids it) the
 * thread runs at the default priority: slower isolation, never an error.
 */
import { getPriority, setPriority } from 'node:os';

/** Lowers the calling thread's scheduling priority to `nice` (0 to 19); answers the nice value in force. */
export function lowerThreadPriority(nice: number): number {
  try {
    setPriority(nice);
    return getPriority();
  } catch {
    return getPriority();
  }
}
