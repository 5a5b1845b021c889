/**
 * The Ed25519 key that signs every validator module served for local
 * evaluation (docs/operations.md, "Signing keys"). Operators give the
 * private key (SIGNING_PRIVATE_KEY_FILE, checked by loadConfig); otherwise
 * the pair kept in the database is used, made by the first instance that
 * starts, so every instance signs with the same key and clients need to
 * trust one public key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SigningKeyStore, StoredSigningKey } from '../storage/types.ts';

/** What GET /signing-key answers and the CLI prints. */
export interface PublicSigningKey {
  readonly algorithm: 'Ed25519';
  readonly keyId: string;
  /** SPKI, PEM. */
  readonly publicKeyPem: string;
  /** The raw 32-byte public key, base64 (what WebCrypto's importKey('raw') takes). */
  readonly publicKey: string;
}

export interface ModuleSigner {
  readonly publicKey: PublicSigningKey;
  /** Base64 Ed25519 signature of exactly these bytes. */
  sign(body: Buffer): string;
}

/**
 * The signer of this process: the configured key, or the stored pair.
 *
 * @example
 * const signer = await loadModuleSigner(config.signingPrivateKeyFile, storage.signingKeys);
 * reply.header('x-rules-signature', signer.sign(Buffer.from(code)));
 */
export async function loadModuleSigner(privateKeyFile: string | undefined, store: SigningKeyStore): Promise<ModuleSigner> {
  const privateKey = privateKeyFile === undefined
    ? createPrivateKey((await store.getOrCreate(newSigningKey)).privateKeyPem)
    : createPrivateKey(readFileSync(privateKeyFile, 'utf8'));
  return signerOf(privateKey);
}

/** A fresh pair, as the database keeps it. */
export function newSigningKey(): StoredSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    keyId: keyIdOf(publicKey),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function signerOf(privateKey: KeyObject): ModuleSigner {
  const publicKey = createPublicKey(privateKey);
  const described: PublicSigningKey = Object.freeze({
    algorithm: 'Ed25519',
    keyId: keyIdOf(publicKey),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    publicKey: rawPublicKey(publicKey).toString('base64'),
  });
  return {
    publicKey: described,
    sign: (body) => sign(null, body, privateKey).toString('base64'),
  };
}

/** The last 32 bytes of the SPKI DER encoding are the raw Ed25519 key. */
function rawPublicKey(publicKey: KeyObject): Buffer {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32);
}

/**
 * A short name of the key, the same wherever it is computed: `ed25519:`
 * and the first 16 hex digits of the SHA-256 of the raw public key.
 */
function keyIdOf(publicKey: KeyObject): string {
  return `ed25519:${createHash('sha256').update(rawPublicKey(publicKey)).digest('hex').slice(0, 16)}`;
}
