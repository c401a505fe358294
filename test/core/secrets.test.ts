// The one place that masks secrets: a remembered token in every form a peer may echo it, cut pieces of it, and
// anything shaped like a token; words that merely contain `sgt_` are left alone.
import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { looksLikeToken, maskSecrets, rememberSecret, urlForMessage } from '../../src/core/secrets.js';
import { findSecret } from '../helpers/secrets.js';

const TOKEN = `sgt_${randomBytes(32).toString('base64url')}`;
rememberSecret(TOKEN);

describe('maskSecrets', () => {
  test.each([
    ['as written', (t: string) => `Bearer ${t}`],
    ['base64', (t: string) => Buffer.from(t).toString('base64')],
    ['base64 of "Bearer <token>" (one byte off)', (t: string) => Buffer.from(`Bearer ${t}`).toString('base64')],
    ['base64url two bytes off', (t: string) => Buffer.from(`ab${t}!`).toString('base64url')],
    ['hex', (t: string) => Buffer.from(t).toString('hex').toUpperCase()],
    ['cut by a space', (t: string) => `${t.slice(0, 30)} ${t.slice(30)}`],
    ['cut into three', (t: string) => `${t.slice(0, 14)}\n${t.slice(14, 30)}\n${t.slice(30)}`],
  ])('%s: no 16-character piece of the token is left', (_name, form) => {
    const text = `before ${form(TOKEN)} after`;
    const masked = maskSecrets(text);
    expect(masked).toContain('[token]');
    expect(findSecret(masked, TOKEN)).toBeUndefined();
    expect(masked.startsWith('before ')).toBe(true);
  });

  test('a token of the same shape that is not remembered is masked too; ordinary text is not', () => {
    expect(maskSecrets(`x sgt_${'A'.repeat(43)} y`)).toBe('x [token] y');
    expect(maskSecrets('the msgt_handler_for_the_big_window_thing and sgt_short')).toBe('the msgt_handler_for_the_big_window_thing and sgt_short');
  });
});

describe('looksLikeToken and urlForMessage', () => {
  test('a word that contains sgt_ is no token; a JWT is', () => {
    expect(looksLikeToken('msgt_handler_for_the_big_window_thing')).toBe(false);
    expect(looksLikeToken(`--comment=${TOKEN}`)).toBe(true);
    expect(looksLikeToken('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSIsImF1ZCI6InNpZ25nYXRlIn0.c2lnbmF0dXJl')).toBe(true);
  });

  test('URLs: userinfo never shown; one without a host by its scheme alone', () => {
    expect(urlForMessage('https://user:pw@host.example/x')).toBe('https://host.example/x');
    expect(urlForMessage('postgres:signgate:pw@127.0.0.1/db')).toBe('postgres: (rest not shown)');
    expect(urlForMessage('not a url at all')).toBe('(not a URL; not shown)');
  });
});
