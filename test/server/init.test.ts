// `signgate serve init`: a first configuration with a fresh key pair that the service signs with at once, and
// `serve token create` checks its own options only.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { sign, verify } from 'node:crypto';
import { createStrongNameKeyPair, parseStrongNameKeyFile, toPublicKeyObject } from '../../src/strongname/key-blob.js';
import { watchServerConfigFile } from '../../src/server/server-config.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { hasMono, runCli, runMono } from '../helpers/fixtures.js';
import { api, startServer } from '../helpers/server.js';

describe('serve init', () => {
  test('writes a configuration and a key pair the service signs with; sn reads the key pair', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-init-'));
    const r = runCli(['serve', 'init', '--dir', dir, '--option-id', '777']);
    expect(r.status, r.stderr).toBe(0);
    const keyPair = parseStrongNameKeyFile(readFileSync(join(dir, '777_keypair.snk')));
    expect(keyPair.kind).toBe('key-pair');
    expect(keyPair.publicKey.bitLength).toBe(2048);
    // Beside it, the public key file for add-in developers: the bytes sn -p writes of the pair.
    const publicFile = readFileSync(join(dir, '777_public.snk'));
    expect(Buffer.compare(publicFile, Buffer.from(keyPair.publicKey.blob))).toBe(0);
    expect(r.stderr).toContain(`Give add-in developers ${join(dir, '777_public.snk')}`);
    if (hasMono) {
      expect(runMono('sn', ['-p', join(dir, '777_keypair.snk'), join(dir, 'sn-777.snk')]).status).toBe(0);
      expect(Buffer.compare(publicFile, readFileSync(join(dir, 'sn-777.snk')))).toBe(0);
    }
    // A second init refuses to overwrite.
    expect(runCli(['serve', 'init', '--dir', dir]).status).toBe(2);

    // The service starts on the written configuration and offers the new option.
    const server = await startServer({ config: watchServerConfigFile(join(dir, 'server.json')).current() });
    try {
      const token = server.token('sandbox', 'ci');
      const licenses = await (await api(server, '/licenses', token)).json();
      expect(licenses).toEqual([{ optionId: 777, publicKeyToken: publicKeyToken(publicFile) }]);
    } finally {
      await server.close();
    }
    expect(r.stderr).not.toMatch(/PRIVATE/);
  });

  test('createStrongNameKeyPair: the pair signs, and the signature verifies with its public key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-key-'));
    const bytes = createStrongNameKeyPair(1024);
    writeFileSync(join(dir, 'k.snk'), bytes);
    const pair = parseStrongNameKeyFile(bytes);
    expect(pair.publicKey.bitLength).toBe(1024);
    const message = Buffer.from('signgate');
    const signature = sign('sha1', message, pair.privateKey!);
    expect(verify('sha1', message, toPublicKeyObject(pair.publicKey), signature)).toBe(true);
    expect(() => createStrongNameKeyPair(1000)).toThrow(/multiple of 8/);
  });
});

describe('serve token create', () => {
  test('without --org: a usage error naming the missing options; its help has no server options', () => {
    const r = runCli(['serve', 'token', 'create', '--config', 'fixtures/server/sandbox.json']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Missing required arguments: org, user');
    const help = runCli(['serve', 'token', 'create', '--help']);
    expect(help.stdout).not.toContain('--port');
    expect(help.stdout).not.toContain('--shutdown-timeout');
  });

  test('a server configuration saved with a byte-order mark is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-bom-'));
    const config = readFileSync('fixtures/server/sandbox.json', 'utf8').replace(/"\.\.\/test-keys\//g, `"${join(process.cwd(), 'fixtures/test-keys')}/`);
    writeFileSync(join(dir, 'server.json'), `\uFEFF${config}`);
    const r = runCli(['serve', 'token', 'create', '--config', join(dir, 'server.json'), '--data-dir', join(dir, 'data'), '--org', 'sandbox', '--user', 'ci']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^sgt_/);
  });
});
