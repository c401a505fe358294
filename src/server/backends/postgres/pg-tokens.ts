// Token hashes in PostgreSQL: every node looks a token up in the database on every request (a primary-key
// lookup), so a token made on one node works on all of them at once and a revocation holds everywhere at once.
import type { Pool } from 'pg';
import { type TokenKeeper } from '../../ports.js';
import { hashToken, newToken, type CreatedToken, type RevokeSelector, type StoredToken } from '../../domain/tokens.js';

export class PgTokenStore implements TokenKeeper {
  /** Inserts of this process still under way: a lookup waits for them, so a token works as soon as it is returned. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly pool: Pool) {}

  create(organization: string, user: string, days: number, now = new Date()): CreatedToken {
    const made = newToken(days, now);
    const stored = this.pool
      .query('INSERT INTO signgate_tokens (hash, organization, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        made.hash,
        organization,
        user,
        made.createdAt,
        made.expiresAt,
      ])
      .then(() => {});
    this.inFlight.add(stored);
    void stored.catch(() => {}).finally(() => this.inFlight.delete(stored));
    return { token: made.token, expiresAt: made.expiresAt, stored };
  }

  async find(token: string): Promise<StoredToken | undefined> {
    if (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
    const { rows } = await this.pool.query<{
      hash: string;
      organization: string;
      user_id: string;
      created_at: Date;
      expires_at: Date;
      revoked_at: Date | null;
    }>('SELECT * FROM signgate_tokens WHERE hash = $1', [hashToken(token)]);
    const r = rows[0];
    if (!r) return undefined;
    return {
      hash: r.hash,
      organization: r.organization,
      user: r.user_id,
      createdAt: r.created_at.toISOString(),
      expiresAt: r.expires_at.toISOString(),
      ...(r.revoked_at ? { revokedAt: r.revoked_at.toISOString() } : {}),
    };
  }

  async revoke(selector: RevokeSelector, now = new Date()): Promise<number> {
    const { rowCount } =
      'token' in selector
        ? await this.pool.query('UPDATE signgate_tokens SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL', [
            hashToken(selector.token),
            now.toISOString(),
          ])
        : await this.pool.query('UPDATE signgate_tokens SET revoked_at = $3 WHERE organization = $1 AND user_id = $2 AND revoked_at IS NULL', [
            selector.organization,
            selector.user,
            now.toISOString(),
          ]);
    return rowCount ?? 0;
  }
}
