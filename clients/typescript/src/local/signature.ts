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

/** The DER of an Ed25519 SubjectPublicKeyInfo is 44 bytes: 12 of algorithm, 32 of key. */
const ED25519_SPKI_BYTES = 44;
const ED25519_RAW_BYTES = 32;

/**
 * Reads a key given as text or bytes, synchronously, so a malformed one is
 * a TypeError where it was given rather than a failure in the background.
 * Throws on text that is neither base64 nor PEM, or bytes of the wrong
 * length for an Ed25519 key.
 */
export function parsePublicKey(key: string | Uint8Array): { format: 'raw' | 'spki'; bytes: Uint8Array } {
  const bad = (why: string): TypeError => new TypeError(
    `publicKey is not an Ed25519 public key (${why}): give base64 of its raw 32 bytes or its PEM, as GET /api/v1/signing-key answers`,
  );
  if (key instanceof Uint8Array) {
    if (key.length !== ED25519_RAW_BYTES) throw bad(`${key.length} bytes, not ${ED25519_RAW_BYTES}`);
    return { format: 'raw', bytes: key };
  }
  const pem = PEM_BODY.exec(key);
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(pem === null ? key : pem[1]);
  } catch {
    throw bad(pem === null ? 'not base64' : 'a PEM whose body is not base64');
  }
  const expected = pem === null ? ED25519_RAW_BYTES : ED25519_SPKI_BYTES;
  if (bytes.length !== expected) throw bad(`${bytes.length} bytes${pem === null ? '' : ' of PEM'}, not ${expected}`);
  return { format: pem === null ? 'raw' : 'spki', bytes };
}

/** Imports a public key for verifying. Throws (TypeError, synchronously) on a key that cannot be Ed25519's. */
export function importPublicKey(key: PublicKeyInput): Promise<VerifyKey> {
  if (typeof key !== 'string' && !(key instanceof Uint8Array)) return Promise.resolve(key);
  const { format, bytes } = parsePublicKey(key);
  return crypto.subtle.importKey(format, asBuffer(bytes), ED25519, false, ['verify']);
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
