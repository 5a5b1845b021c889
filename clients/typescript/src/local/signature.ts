/**
 * Ed25519 verification of a module's bytes with WebCrypto (browsers, and
 * Node's globalThis.crypto.subtle from Node 20 on). The key is the one the
 * caller was given out of band, never one read from the same answer.
 */

/** An imported WebCrypto key (CryptoKey; named through crypto.subtle so the types need no DOM library). */
export type VerifyKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A public key as the service publishes it: base64 of the raw 32 bytes, or PEM (SPKI), or the raw bytes, or an imported CryptoKey. */
export type PublicKeyInput = string | Uint8Array | VerifyKey;

const ED25519 = { name: 'Ed25519' } as const;
const PEM_BODY = /-----BEGIN PUBLIC KEY-----([\s\S]+?)-----END PUBLIC KEY-----/;

/** Decodes base64 (standard or url-safe) to bytes without Node's Buffer. */
export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Encodes bytes as base64 without Node's Buffer (in slices: String.fromCharCode takes a bounded argument list). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Imports a public key for verifying. Throws on a key that is not Ed25519. */
export async function importPublicKey(key: PublicKeyInput): Promise<VerifyKey> {
  if (typeof key !== 'string' && !(key instanceof Uint8Array)) return key;
  if (typeof key === 'string') {
    const pem = PEM_BODY.exec(key);
    if (pem !== null) return crypto.subtle.importKey('spki', asBuffer(base64ToBytes(pem[1])), ED25519, false, ['verify']);
    return crypto.subtle.importKey('raw', asBuffer(base64ToBytes(key)), ED25519, false, ['verify']);
  }
  return crypto.subtle.importKey('raw', asBuffer(key), ED25519, false, ['verify']);
}

/** Whether `signature` (base64, from X-Rules-Signature) is `key`'s signature of exactly `body`. */
export async function verifySignature(key: VerifyKey, body: Uint8Array, signature: string | null): Promise<boolean> {
  if (signature === null || signature.trim() === '') return false;
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(signature);
  } catch {
    return false;
  }
  return crypto.subtle.verify(ED25519, key, asBuffer(bytes), asBuffer(body));
}

/** A copy of the bytes in an ArrayBuffer of their own, as WebCrypto's types want. */
function asBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}
