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
  key create <tenant> <name> --role admin|validator|client
                                             create an API key; the key is printed once
  key revoke <tenant> <keyId>                revoke a key (the tenant's last admin key cannot be)
  key list <tenant>                          list keys (never their secrets)
  contexts <tenant>                          list contexts with ruleset versions and rule counts
  export <tenant> <context> [--draft] [--out FILE]
                                             print (or write) the context's rules file: live rules,
                                             or with --draft what a publish would make live
  import <tenant> <context> FILE [--dry-run] [--prune] [--publish] [--force]
                                             make the context's drafts equal to the file, in one
                                             transaction; --prune archives codes the file lacks,
                                             --publish publishes too (stored tests must pass
                                             unless --force)
  test FILE                                  offline: compile the rules file's own rules and run
                                             its tests against them, with no database and no
                                             service; exit status 1 when a rule does not compile
                                             or a test fails, each named by its path
  bench FILE [--time N] [--top N]           offline: time the rules file's validator (tinybench)
                                             over its tests' payloads, whole and without each rule,
                                             and print the time per validation and each rule's
                                             share of it; exit status 1 when a rule does not compile
  bench <tenant> <context> [--draft] [--samples N] [--time N] [--top N]
                                             the same for the context's live rules (--draft: what a
                                             publish would make live) over its stored tests'
                                             payloads, or its N newest recorded samples (on the
                                             database only: the API does not list samples)
                                             --time N  time each validator for N ms (default:
                                                       about 20 s over all, 100 to 500 each)
                                             --top N   time at most N rules with and without
                                                       (default 100): with more, the N costliest
                                                       alone are chosen
  test-drafts <tenant> <context> [FILE]      run the stored tests, or the file's, against the
                                             context's draft rules; exit status 1 when one fails
  impact <tenant> <context> [--target draft|N] [--limit N]
                                             replay the context's newest recorded samples (default
                                             10000, at most 100000) against the live rules and the
                                             draft (default) or ruleset version N, and print what
                                             would change
  table export <tenant> <rule-id> [FILE]
                                             print (or write to FILE) the rows of the rule's
                                             decision table as CSV: a header of the input then
                                             output names, one line per row
  table import <tenant> <rule-id> FILE [--version N]
                                             replace the rule's table rows with the CSV file's (the
                                             header as export writes it; inputs, hit policy and
                                             noMatch stay): a new draft version, checked and
                                             compiled; prints it and the rule's warnings. With
                                             --version, refused unless the rule is still at
                                             version N (the one the file was exported from)
  signing-key [<tenant>]                     print the public key that signs validator modules
                                             (the tenant only with --url, whose key reads it)

Options:
  --json      print the result as JSON (for scripts)
  --url URL   run the command against the service at URL, through its API, instead
              of on the database: every command on a tenant except "tenant create",
              and "signing-key <tenant>" (migrate, "test FILE" and "bench FILE" need
              no service),
              as the tenant's admin key, given by one of:
    --key-stdin   the first line of stdin (pipe it in: no other process sees it)
    --key KEY     the command line (other users see it in the process list)
    RULES_API_KEY in the environment, when neither option is given
  -h, --help  print this help

Environment: the service's own. DATABASE_URL selects PostgreSQL, else
RULES_DATA_DIR names the embedded database's folder (RULES_DATA_DIR=./data is
the one "npm start" uses); with neither, the commands that need a database
refuse rather than create one. The embedded database belongs to one process:
stop the server before running the CLI on it (the CLI refuses while a server
holds the folder). RATE_LIMIT_MAX and RATE_LIMIT_WINDOW_MS are
the defaults shown by "tenant rate-limit". RULES_API_KEY is the admin key of
--url when the command line gives none.

Exit status: 0 done, 1 the command failed (or a test failed), 2 the command line is wrong.
`;
