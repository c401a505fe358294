// Personal access tokens in the data directory (domain/tokens.ts: what a token is). The store keeps them in <data-dir>/tokens.json and follows that file while the service runs:
// a token made by `serve token create` in another process is found at once (a miss looks at the file again),
// and a revocation is seen within a second (a hit looks at most once a second). Looking costs one stat; the
// file is read again only when it changed.
import { timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { narrowDirSync, writeFileAtomicSync } from '../../fs-atomic.js';
import { hashToken, newToken, type CreatedToken, type RevokeSelector, type StoredToken } from '../../domain/tokens.js';
import type { TokenKeeper } from '../../ports.js';

/** How often a successful lookup looks at the token file again (a revocation is seen within this time). */
export const TOKEN_REFRESH_MS = 1000;

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
