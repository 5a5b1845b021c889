/**
 * How the CLI fails: exit code 2 for a command line it does not understand
 * (nothing was done), 1 for a command that was understood and failed
 * (configuration, database, unknown tenant or key, refused change).
 */

/** The command line is wrong; the message says how, usage follows. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command was understood and could not be done. */
export class CommandError extends Error {
  readonly exitCode = 1;
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}
