/**
 * The service's own module-signing key pair (docs/operations.md, "Signing
 * keys"), used when operators configure none: made by the first instance
 * that needs it and read by every other, so all instances sign alike.
 */
import type { Kysely } from 'kysely';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import type { SigningKeyStore, StoredSigningKey } from './types.ts';

/** SigningKeyStore over the signing_keys table (one row at most). */
export class SqlSigningKeyStore implements SigningKeyStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  getOrCreate(make: () => StoredSigningKey): Promise<StoredSigningKey> {
    return guard(async () => {
      const existing = await this.#read();
      if (existing !== undefined) return existing;
      const made = make();
      // Two instances starting together: the first insert wins, and both read it back.
      await this.#db
        .insertInto('signing_keys')
        .values({ slot: 1, key_id: made.keyId, private_key_pem: made.privateKeyPem, public_key_pem: made.publicKeyPem })
        .onConflict((oc) => oc.column('slot').doNothing())
        .execute();
      const stored = await this.#read();
      if (stored === undefined) throw new Error('the signing key was inserted but cannot be read back');
      return stored;
    });
  }

  async #read(): Promise<StoredSigningKey | undefined> {
    const row = await this.#db
      .selectFrom('signing_keys')
      .select(['key_id', 'private_key_pem', 'public_key_pem'])
      .where('slot', '=', 1)
      .executeTakeFirst();
    return row === undefined ? undefined : { keyId: row.key_id, privateKeyPem: row.private_key_pem, publicKeyPem: row.public_key_pem };
  }
}
