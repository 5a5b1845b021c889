/**
 * Rules and their lifecycle (product.md 4). Placeholder until the
 * lifecycle lands; every method refuses.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.ts';
import type { RuleStore } from './types.ts';

function notYet(): never {
  throw new Error('rule storage is not implemented yet');
}

/** RuleStore over the rules, rule_versions, contexts and ruleset_versions tables. */
export class SqlRuleStore implements RuleStore {
  readonly #db: Kysely<DatabaseSchema>;
  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }
  get db(): Kysely<DatabaseSchema> {
    return this.#db;
  }
  create = notYet;
  get = notYet;
  list = notYet;
  update = notYet;
  versions = notYet;
  archive = notYet;
  publishRule = notYet;
  publishContext = notYet;
  rollback = notYet;
  liveRuleset = notYet;
  draftRuleset = notYet;
  rulesetVersions = notYet;
  contexts = notYet;
}
