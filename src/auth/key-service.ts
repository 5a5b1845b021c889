/**
 * KeyService: issuing and revoking keys. Revocation evicts the key from the
 * authentication cache before the call returns, so it is effective at once.
 */
import type { KeyService } from '../app-deps.ts';
import type { ApiKeyStore } from '../storage/types.ts';
import { generateApiKey, hashApiKey } from './api-key.ts';
import type { KeyCache } from './key-cache.ts';

/** Builds the KeyService over the key store and the auth cache. */
export function createKeyService(store: ApiKeyStore, cache: KeyCache): KeyService {
  return {
    async create(tenantId, name, role, origin) {
      const key = generateApiKey();
      const record = await store.create(tenantId, name, role, hashApiKey(key), origin);
      return { record, key };
    },
    async revoke(tenantId, keyId, origin) {
      const record = await store.revoke(tenantId, keyId, origin);
      cache.evictKeyId(keyId);
      return record;
    },
  };
}
