/**
 * A timeout for an answer that arrives over a socket, measured in time the
 * event loop was free to read it.
 *
 * A plain setTimeout misjudges a stalled event loop as a slow peer: timers
 * run before the poll phase reads sockets, so after a synchronous task held
 * the loop past the timeout, every waiting timer fires first, although the
 * answers may have been waiting unread in their sockets all along. Hence:
 * - a timer that fires late (the loop was held for a good part of the
 *   wait) is armed once more for the whole timeout, now the loop is free;
 * - a verdict is given in setImmediate, which runs after the poll phase,
 *   so an answer already received is read first and wins.
 */
import { performance } from 'node:perf_hooks';

/** Stops a timeout that has not fired. */
export type CancelTimeout = () => void;

/**
 * Calls `onTimeout` once the event loop was free for `timeoutMs` without
 * the caller cancelling.
 *
 * @example
 * const cancel = loopAwareTimeout(250, () => giveUp());
 * client.call().then(() => cancel());
 */
export function loopAwareTimeout(timeoutMs: number, onTimeout: () => void): CancelTimeout {
  let armedAt = performance.now();
  let rearmed = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const fire = (): void => {
    timer = undefined;
    const lateMs = performance.now() - armedAt - timeoutMs;
    if (!rearmed && lateMs > timeoutMs / 2) {
      rearmed = true;
      armedAt = performance.now();
      timer = setTimeout(fire, timeoutMs);
      return;
    }
    immediate = setImmediate(() => {
      immediate = undefined;
      onTimeout();
    });
  };
  timer = setTimeout(fire, timeoutMs);
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    if (immediate !== undefined) clearImmediate(immediate);
    timer = undefined;
    immediate = undefined;
  };
}
