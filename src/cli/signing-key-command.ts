/**
 * `signing-key`: the public key that signs validator modules, as the
 * service serves it at GET /api/v1/signing-key (docs/operations.md,
 * "Signing keys"), for operators to hand to callers.
 */
import type { Config } from '../config.ts';
import { loadModuleSigner, type PublicSigningKey } from '../signing/module-signer.ts';
import type { Storage } from '../storage/types.ts';
import type { CommandOutput } from './run-command.ts';

/** On the database: the configured key, or the stored pair (made now if there is none yet, as a server's start would). */
export async function localSigningKey(storage: Storage, config: Config): Promise<CommandOutput> {
  return signingKeyOutput((await loadModuleSigner(config.signingPrivateKeyFile, storage.signingKeys)).publicKey);
}

/** The key as text (its id, the raw key, the PEM) and as JSON (what the API answers). */
export function signingKeyOutput(key: PublicSigningKey): CommandOutput {
  const text = [
    `Algorithm: ${key.algorithm}`,
    `Key id: ${key.keyId}`,
    `Public key (raw, base64): ${key.publicKey}`,
    key.publicKeyPem.trimEnd(),
  ].join('\n');
  return { text, json: key };
}
