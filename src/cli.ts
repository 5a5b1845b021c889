/**
 * The operator CLI's entry point: `npm run cli -- <command>` or
 * `node --import tsx src/cli.ts <command>`. Commands and exit statuses are
 * in `src/cli/usage.ts`.
 */
import { runCli } from './cli/run-cli.ts';
import { firstLine } from './cli/stdin-line.ts';

process.exitCode = await runCli(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdinLine: () => firstLine(process.stdin),
});
