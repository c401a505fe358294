// Personal access tokens: shown once when made, stored only as SHA-256 hashes, with a fixed expiry.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from './fs-atomic.js';

export interface StoredToken {
  readonly hash: string;
  readonly organization: string;
  readonly user: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

const PREFIX = 'sgt_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export class TokenStore {
  private readonly path: string;
  private tokens: StoredToken[];

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, 'tokens.json');
    this.tokens = existsSync(this.path) ? (JSON.parse(readFileSync(this.path, 'utf8')) as StoredToken[]) : [];
  }

  /** Makes a token valid for `days` days and returns it; only its hash is kept. */
  create(organization: string, user: string, days: number, now = new Date()): { token: string; expiresAt: string } {
    const token = PREFIX + randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + days * 86_400_000).toISOString();
    this.tokens = [...this.tokens, { hash: hashToken(token), organization, user, createdAt: now.toISOString(), expiresAt }];
    writeFileAtomicSync(this.path, `${JSON.stringify(this.tokens, null, 2)}\n`);
    return { token, expiresAt };
  }

  /** The stored token for a presented one, or undefined. Expiry is the caller's to check. */
  find(token: string): StoredToken | undefined {
    const hash = Buffer.from(hashToken(token), 'hex');
    return this.tokens.find((t) => timingSafeEqual(Buffer.from(t.hash, 'hex'), hash));
  }
}
