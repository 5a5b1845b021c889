/**
 * Environment every service a test starts (in process or as a process)
 * gets unless the test sets it otherwise: no shedding for overload
 * (MAX_EVENT_LOOP_DELAY_MS=0). Tests send heavy management calls back to
 * back on a shared 2-core machine, often with the embedded database on the
 * server's own thread, and they hold the loop for hundreds of milliseconds
 * at a time: a service that sheds would refuse the calls that follow. An
 * in-process app also shares its loop with the test runner, whose work
 * would count as the service's lag. test/http/overload.test.ts tests
 * shedding with limits of its own.
 *
 * @example
 * loadConfig({ ...TEST_SERVICE_ENV, ...env });
 */
export const TEST_SERVICE_ENV: Readonly<Record<string, string>> = Object.freeze({ MAX_EVENT_LOOP_DELAY_MS: '0' });
