// Personal access tokens as every backend keeps them: shown once when made, stored only as SHA-256 hashes, with a
// fixed expiry; the token format (`sgt_` and 32 random bytes) and the id that names a token in logs without being it.
import { createHash, randomBytes } from 'node:crypto';

export interface StoredToken {
  readonly hash: string;
  readonly organization: string;
  readonly user: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** When the token was revoked (`serve token revoke`); a revoked token is refused. */
  readonly revokedAt?: string;
}

/** A token just made: the secret (shown once) and, where the store writes in the background, when it is kept. */
export interface CreatedToken {
  readonly token: string;
  readonly expiresAt: string;
  /** Settles when the hash is stored for every node (at once for the data directory). */
  readonly stored: Promise<void>;
}

/** Which tokens to revoke: one token, or every token of a user in an organization. */
export type RevokeSelector = { readonly token: string } | { readonly organization: string; readonly user: string };

const PREFIX = 'sgt_';

/** The token of an `Authorization: Bearer <token>` header, or undefined when the header is not one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * A personal access token's id, for logs and the signature record: the first 16 hex digits of its SHA-256 (the hash
 * the store keeps), which names the token without being it.
 */
export function tokenIdOf(hash: string): string {
  return hash.slice(0, 16);
}

/** A new random token with its expiry. */
export function newToken(days: number, now: Date): { token: string; hash: string; createdAt: string; expiresAt: string } {
  const token = PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token), createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + days * 86_400_000).toISOString() };
}
