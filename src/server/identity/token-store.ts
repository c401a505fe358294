// Personal access tokens: shown once when made, stored only as SHA-256 hashes, with a fixed expiry.
// The data-directory store keeps them in <data-dir>/tokens.json and follows that file while the service runs:
// a token made by `serve token create` in another process is found at once (a miss looks at the file again),
// and a revocation is seen within a second (a hit looks at most once a second). Looking costs one stat; the
// file is read again only when it changed.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { narrowDirSync, writeFileAtomicSync } from '../storage/fs-atomic.js';

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

/** Where token hashes are kept: the data directory (TokenStore) or PostgreSQL. */
export interface TokenKeeper {
  /** Makes a token valid for `days` days and returns it; only its hash is kept. */
  create(organization: string, user: string, days: number, now?: Date): CreatedToken;
  /** The stored token for a presented one, or undefined. Expiry and revocation are the caller's to check. */
  find(token: string): StoredToken | undefined | Promise<StoredToken | undefined>;
  /** Marks the selected tokens revoked; resolves to how many were revoked now. */
  revoke(selector: RevokeSelector, now?: Date): number | Promise<number>;
  /**
   * True when the store holds no token at all, revoked and expired ones counted (the data directory's store: a
   * service started with another --data-dir than `serve token create` was given); undefined where it is not known.
   */
  holdsNone?(): boolean;
}

const PREFIX = 'sgt_';
/** How often a successful lookup looks at the token file again (a revocation is seen within this time). */
export const TOKEN_REFRESH_MS = 1000;

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

export class TokenStore implements TokenKeeper {
  private readonly path: string;
  private tokens: StoredToken[] = [];
  /** mtime and size of the file as last read. */
  private stamp = '';
  private checkedAt = 0;

  constructor(dataDir: string) {
    // Token hashes are no tokens, but the folder holds the uploads and signed files too: the service's own.
    narrowDirSync(dataDir);
    this.path = join(dataDir, 'tokens.json');
    this.refresh(true);
  }

  private refresh(force: boolean): void {
    const at = Date.now();
    if (!force && at - this.checkedAt < TOKEN_REFRESH_MS) return;
    this.checkedAt = at;
    let stamp: string;
    try {
      const s = statSync(this.path);
      stamp = `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      stamp = 'none';
    }
    if (stamp === this.stamp) return;
    try {
      this.tokens = existsSync(this.path) ? (JSON.parse(readFileSync(this.path, 'utf8')) as StoredToken[]) : [];
      this.stamp = stamp;
    } catch {
      // A file being replaced is renamed into place whole; anything unreadable keeps the last good list.
    }
  }

  create(organization: string, user: string, days: number, now = new Date()): CreatedToken {
    this.refresh(true);
    const made = newToken(days, now);
    this.tokens = [...this.tokens, { hash: made.hash, organization, user, createdAt: made.createdAt, expiresAt: made.expiresAt }];
    this.write();
    return { token: made.token, expiresAt: made.expiresAt, stored: Promise.resolve() };
  }

  find(token: string): StoredToken | undefined {
    this.refresh(false);
    const hash = Buffer.from(hashToken(token), 'hex');
    const lookup = () => this.tokens.find((t) => timingSafeEqual(Buffer.from(t.hash, 'hex'), hash));
    const found = lookup();
    if (found) return found;
    this.refresh(true);
    return lookup();
  }

  holdsNone(): boolean {
    this.refresh(false);
    return this.tokens.length === 0;
  }

  revoke(selector: RevokeSelector, now = new Date()): number {
    this.refresh(true);
    const hash = 'token' in selector ? hashToken(selector.token) : undefined;
    let count = 0;
    this.tokens = this.tokens.map((t) => {
      const hit =
        hash !== undefined
          ? t.hash === hash
          : t.organization === (selector as { organization: string }).organization && t.user === (selector as { user: string }).user;
      if (!hit || t.revokedAt) return t;
      count++;
      return { ...t, revokedAt: now.toISOString() };
    });
    if (count) this.write();
    return count;
  }

  private write(): void {
    writeFileAtomicSync(this.path, `${JSON.stringify(this.tokens, null, 2)}\n`);
    this.stamp = '';
    this.refresh(true);
  }
}
