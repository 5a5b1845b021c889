/** The `--help` text: every command, its arguments and the environment it reads. */
export const USAGE = `Usage: npm run cli -- <command> [arguments] [--json]
       node --import tsx src/cli.ts <command> [arguments] [--json]

Commands:
  migrate                                    bring the database schema up to date
  tenant create <tenant>                     create a tenant (nothing happens if it exists)
  tenant rate-limit <tenant>                 show the tenant's rate limit
  tenant rate-limit <tenant> <max> <windowMs>
                                             allow <max> requests per <windowMs> ms
  tenant rate-limit <tenant> default         back to RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS
  key create <tenant> <name> --role admin|validator
                                             create an API key; the key is printed once
  key revoke <tenant> <keyId>                revoke a key (the tenant's last admin key cannot be)
  key list <tenant>                          list keys (never their secrets)
  contexts <tenant>                          list contexts with ruleset versions and rule counts

Options:
  --json      print the result as JSON (for scripts)
  -h, --help  print this help

Environment: the service's own. DATABASE_URL selects PostgreSQL; without it the
embedded database in RULES_DATA_DIR (default ./data) is used, which belongs to
one process: stop the server before running the CLI on it (the CLI refuses
while a server holds the folder). RATE_LIMIT_MAX and RATE_LIMIT_WINDOW_MS are
the defaults shown by "tenant rate-limit".

Exit status: 0 done, 1 the command failed, 2 the command line is wrong.
`;
