/** What the page reads from /config.json: where the rules service is, and how to reach it. */
export interface FormConfig {
  /** The service's address, without /api/v1. */
  serviceUrl: string;
  tenantId: string;
  /** The context whose published rules the form runs (local validation turned on). */
  context: string;
  /** A key of the `client` role: it may only download modules and follow their feed, so the page may show it. */
  clientKey: string;
  /** The service's Ed25519 public key (base64 of the raw 32 bytes, or PEM), given out of band. */
  publicKey: string;
}
